import Foundation
import ServiceTestSupport
import Synchronization

/// A child process whose combined stdout and stderr is collected as it arrives, optionally
/// with a stdin pipe kept open (the grpcio peer serves until its stdin closes).
///
/// Thread-safe: the output is behind a Mutex; `Process` and `Pipe` are only touched through
/// their thread-safe operations (launch, terminate, isRunning, closing a handle).
final class ChildProcess: @unchecked Sendable {
    private let process = Process()
    private let outputPipe = Pipe()
    private let inputPipe: Pipe?
    private let collected = Mutex<(output: Data, ended: Bool)>((Data(), false))

    /// Starts `executable` with `arguments`; with `keepStdinOpen`, stdin is a pipe that stays
    /// open until ``closeStdin()``, otherwise `/dev/null`.
    init(executable: String, arguments: [String], keepStdinOpen: Bool = false) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = outputPipe
        process.standardError = outputPipe
        inputPipe = keepStdinOpen ? Pipe() : nil
        process.standardInput = inputPipe ?? FileHandle.nullDevice
        try process.run()
        let reader = outputPipe.fileHandleForReading
        let thread = Thread { [self] in
            while true {
                let chunk = reader.availableData
                if chunk.isEmpty { break }
                collected.withLock { $0.output.append(chunk) }
            }
            collected.withLock { $0.ended = true }
        }
        thread.start()
    }

    /// Everything the process wrote so far.
    var output: String { String(decoding: collected.withLock { $0.output }, as: UTF8.self) }

    /// The first complete output line starting with `prefix`, waiting up to `timeout`.
    func line(startingWith prefix: String, timeout: Duration) async -> String? {
        var found: String?
        _ = await eventually(within: timeout) {
            let (text, ended) = collected.withLock { (String(decoding: $0.output, as: UTF8.self), $0.ended) }
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()  // complete lines only
            found = lines.first { $0.hasPrefix(prefix) }.map(String.init)
            return found != nil || ended
        }
        return found
    }

    /// Waits up to `timeout` for the process to exit and its output to end; returns the exit
    /// status, or nil (after terminating it) when it did not exit in time.
    func waitForExit(timeout: Duration) async -> Int32? {
        let exited = await eventually(within: timeout) { !process.isRunning && collected.withLock { $0.ended } }
        guard exited else {
            terminate()
            return nil
        }
        return process.terminationStatus
    }

    /// Closes the stdin pipe: the process reads end-of-file.
    func closeStdin() {
        try? inputPipe?.fileHandleForWriting.close()
    }

    /// Sends SIGTERM if it is still running.
    func terminate() {
        if process.isRunning { process.terminate() }
    }

    /// What a finished run produced.
    struct Outcome: Sendable {
        /// The exit status; nil when it was killed for taking too long.
        let status: Int32?
        /// Combined stdout and stderr.
        let output: String
    }

    /// Runs a process to completion (or `timeout`) with stdin from /dev/null.
    static func run(executable: String, arguments: [String], timeout: Duration) async throws -> Outcome {
        let child = try ChildProcess(executable: executable, arguments: arguments)
        let status = await child.waitForExit(timeout: timeout)
        if status == nil { _ = await child.waitForExit(timeout: .seconds(2)) }
        return Outcome(status: status, output: child.output)
    }
}
