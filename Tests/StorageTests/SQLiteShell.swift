import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The `sqlite3` command-line shell as a child process: a second, independent SQLite writer
/// that a test can feed SQL and then kill, to crash it in the middle of a transaction.
///
/// The shell runs with `-bail`, so an SQL error ends it and `waitForLine(_:)` throws instead of
/// waiting forever.
final class SQLiteShell: Sendable {
    /// What went wrong with the child process.
    struct Failure: Error, CustomStringConvertible {
        /// A description of the failure, with the shell's standard error when there is some.
        let description: String
    }

    /// The `sqlite3` executable.
    static let executable = "/usr/bin/sqlite3"

    private let process: Process
    private let input: Pipe
    private let output: Pipe
    private let errors: Pipe
    private let exited: AsyncStream<Void>

    /// Starts `sqlite3 -bail path`.
    init(path: String) throws {
        process = Process()
        input = Pipe()
        output = Pipe()
        errors = Pipe()
        let (exited, exitedContinuation) = AsyncStream<Void>.makeStream()
        self.exited = exited
        process.executableURL = URL(fileURLWithPath: Self.executable)
        process.arguments = ["-bail", path]
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        // Set before launching, so that an early exit cannot be missed.
        process.terminationHandler = { _ in exitedContinuation.finish() }
        try process.run()
    }

    /// Writes `sql` (with a final newline) to the shell's standard input.
    func send(_ sql: String) throws {
        try input.fileHandleForWriting.write(contentsOf: Data((sql + "\n").utf8))
    }

    /// Waits until the shell prints a line equal to `line`, reading on a thread of its own.
    ///
    /// - Throws: `Failure` when the shell exits first, with what it wrote to standard error.
    func waitForLine(_ line: String) async throws {
        let reader = output.fileHandleForReading
        let errorReader = errors.fileHandleForReading
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let thread = Thread {
                var printed = ""
                while true {
                    let data = reader.availableData
                    if data.isEmpty {
                        let stderr = String(decoding: errorReader.readDataToEndOfFile(), as: UTF8.self)
                        continuation.resume(throwing: Failure(description: "sqlite3 exited: \(stderr)"))
                        return
                    }
                    printed += String(decoding: data, as: UTF8.self)
                    if printed.split(separator: "\n").contains(Substring(line)) {
                        continuation.resume()
                        return
                    }
                }
            }
            thread.start()
        }
    }

    /// Sends SIGKILL (no clean-up of any kind) and waits until the process is gone.
    ///
    /// - Returns: The signal that ended the process, or nil if it exited normally.
    func kill() async -> Int32? {
        _ = Glibc.kill(process.processIdentifier, SIGKILL)
        for await _ in exited {}
        return process.terminationReason == .uncaughtSignal ? process.terminationStatus : nil
    }
}
