import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs work that lasts until the user stops it — the watch commands — ending it cleanly on
/// SIGINT (Ctrl-C) or SIGTERM: the work's task is cancelled (which cancels its call with
/// RST_STREAM) and the command returns normally, so shopctl exits 0. A test running a
/// command in-process stops it the same way through ``ProcessContext/interruptions``, and
/// the process's signal dispositions are left alone.
enum Interruption {
    /// Runs `body` until it returns or a signal arrives; true when a signal ended it.
    static func run(_ body: @escaping @Sendable () async throws -> Void) async throws -> Bool {
        if let interruptions = ProcessContext.current.interruptions {
            return try await run(body, until: interruptions)
        }
        let (signals, continuation) = AsyncStream<Void>.makeStream()
        let numbers = [SIGINT, SIGTERM]
        let sources = numbers.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { continuation.yield() }
            source.resume()
            return source
        }
        defer {
            for source in sources { source.cancel() }
            for number in numbers { signal(number, SIG_DFL) }
            continuation.finish()
        }
        return try await run(body, until: signals)
    }

    /// Runs `body` until it returns or `interruptions` yields; true when an interruption ended it.
    private static func run(
        _ body: @escaping @Sendable () async throws -> Void, until interruptions: AsyncStream<Void>
    ) async throws -> Bool {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                try await body()
                return false
            }
            group.addTask {
                for await _ in interruptions { return true }
                return false
            }
            // Whichever ends first decides: an interruption, or the body (the stream ended or failed).
            let interrupted = try await group.next() ?? false
            group.cancelAll()
            return interrupted
        }
    }
}
