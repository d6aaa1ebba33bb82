import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Runs a command to completion and collects what it wrote.
///
/// The command is started with `posix_spawn` and awaited with `waitpid`, its output written
/// to temporary files. Foundation's
/// `Process` is not used here: it learns of an exit when a socket it hands the child reaches
/// end-of-file, which never happens while a process the command left running in the
/// background (as `deploy/compose up` does) still holds that socket.
package enum Command {
    /// What a finished command produced.
    package struct Result: Sendable, CustomStringConvertible {
        /// The exit status (128 + the signal's number when a signal ended it).
        package let status: Int32
        /// Its standard output.
        package let output: String
        /// Its standard error.
        package let errors: String

        package var description: String { "exit status \(status)\n--- stdout\n\(output)\n--- stderr\n\(errors)" }
    }

    /// Why a command did not run to its end.
    package enum Failure: Error, CustomStringConvertible {
        /// It could not be started: the `posix_spawn` error.
        case notStarted(command: String, code: Int32)
        /// It ran longer than allowed and was killed.
        case timedOut(command: String, limit: Duration)

        package var description: String {
            switch self {
            case .notStarted(let command, let code): "cannot start \(command): \(String(cString: strerror(code)))"
            case .timedOut(let command, let limit): "\(command) did not finish within \(limit); it was killed"
            }
        }
    }

    /// Runs `executable` (a path, or a name looked up in `PATH`) with `arguments` in the
    /// caller's environment with `environment` laid over it (`nil` values remove a variable).
    /// Waits up to `timeout`, then kills it and throws.
    package static func run(
        _ executable: String, _ arguments: [String], environment: [String: String?] = [:], timeout: Duration
    ) async throws -> Result {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("deploy-command-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let outputPath = scratch.appendingPathComponent("stdout").path
        let errorPath = scratch.appendingPathComponent("stderr").path
        let commandLine = ([executable] + arguments).joined(separator: " ")

        var merged = ProcessInfo.processInfo.environment
        for (name, value) in environment { merged[name] = value }
        let pid = try spawn(
            executable, arguments: arguments, environment: merged.map { "\($0.key)=\($0.value)" },
            output: outputPath, errors: errorPath, commandLine: commandLine)

        let deadline = ContinuousClock.now + timeout
        var status: Int32 = 0
        while true {
            let waited = waitpid(pid, &status, WNOHANG)
            if waited == pid { break }
            if waited < 0 && errno != EINTR { break }
            if ContinuousClock.now >= deadline {
                kill(pid, SIGKILL)
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                throw Failure.timedOut(command: commandLine, limit: timeout)
            }
            try await Task.sleep(for: .milliseconds(25))
        }
        // Exited: the status is in bits 8–15; killed: the signal is in bits 0–6.
        let signal = status & 0x7f
        return Result(
            status: signal == 0 ? (status >> 8) & 0xff : 128 + signal,
            output: (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "",
            errors: (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "")
    }

    /// Runs `executable` with `arguments` to its end on the calling thread, its output
    /// discarded: for where no task runs any more (an `atexit` handler). Returns whether it
    /// started and exited with status 0.
    @discardableResult
    package static func runBlocking(_ executable: String, _ arguments: [String]) -> Bool {
        let commandLine = ([executable] + arguments).joined(separator: " ")
        let environment = ProcessInfo.processInfo.environment.map { "\($0.key)=\($0.value)" }
        guard let pid = try? spawn(
            executable, arguments: arguments, environment: environment, output: "/dev/null", errors: "/dev/null",
            commandLine: commandLine)
        else { return false }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return status == 0
    }

    /// Starts the command with stdin from /dev/null and stdout, stderr into the two files.
    private static func spawn(
        _ executable: String, arguments: [String], environment: [String], output: String, errors: String,
        commandLine: String
    ) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errors, O_WRONLY | O_CREAT | O_TRUNC, 0o600)

        // The caller's thread may block signals (the cooperative pool's threads do) and a
        // spawned process inherits its mask: compose's supervisors would then never see the
        // SIGTERM of `down`. The command starts with no signal blocked and every default.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        var all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let code =
            executable.contains("/")
            ? posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
            : posix_spawnp(&pid, executable, &actions, &attributes, argv, envp)
        guard code == 0 else { throw Failure.notStarted(command: commandLine, code: code) }
        return pid
    }
}
