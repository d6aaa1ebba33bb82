internal import Dispatch
#if canImport(Glibc)
internal import Glibc
#endif

/// SIGTERM and SIGINT as an awaitable event.
final class TerminationSignals {
    /// The handlers, kept alive as long as the events are awaited.
    private let sources: [any DispatchSourceSignal]
    /// The names of the signals received, in order.
    private let stream: AsyncStream<String>

    /// Handles SIGTERM and SIGINT from now on instead of their default action.
    init() {
        let (stream, continuation) = AsyncStream<String>.makeStream()
        self.stream = stream
        sources = [(SIGTERM, "SIGTERM"), (SIGINT, "SIGINT")].map { number, name in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { continuation.yield(name) }
            source.resume()
            return source
        }
    }

    /// The name of the first signal received.
    func wait() async -> String {
        for await name in stream { return name }
        return "end of signals"
    }
}
