#if DEBUG  // See InProcessStack.swift.
package import RPC
import Synchronization

/// A transport to a service built in this process that a test can cut, as if the service's
/// process were killed, and restore, as if it were started again: what a caller of a service
/// sees during an outage, without a process. Cut, the calls under way end with `UNAVAILABLE`
/// (their handlers cancelled) and new ones are refused with `UNAVAILABLE` before reaching the
/// service — as a refused connection is, so the server never answered them; restored, calls go
/// over a fresh ``InProcessTransport``. Thread-safe.
package final class InterruptibleTransport: ClientTransport {
    /// Makes the transport that carries the calls while the service can be reached.
    private let connect: @Sendable () -> InProcessTransport
    /// What carries the calls now; nil while cut off or once closed.
    private let current: Mutex<InProcessTransport?>
    private let closed = Atomic<Bool>(false)

    /// A transport over what `connect` makes, reaching the service until ``cut()``.
    package init(connect: @escaping @Sendable () -> InProcessTransport) {
        self.connect = connect
        current = Mutex(connect())
    }

    /// The answer to a call while the service cannot be reached.
    private static let unreachable = RPCError(code: .unavailable, message: "The service cannot be reached.")

    /// Starts the call over the current transport; `UNAVAILABLE` while cut off or closed.
    package func startCall(
        path: String, options: CallOptions, prepare: (any ClientCall) -> Void
    ) throws(RPCError) -> any ClientCall {
        guard let transport = current.withLock({ $0 }) else { throw Self.unreachable }
        return try transport.startCall(path: path, options: options, prepare: prepare)
    }

    /// Whether ``close()`` has been called.
    package var isClosed: Bool { closed.load(ordering: .acquiring) }

    /// Closes it for good: calls under way end with `UNAVAILABLE`, and ``restore()`` does nothing.
    package func close() async {
        closed.store(true, ordering: .releasing)
        await cut()
    }

    /// Cuts the service off: the calls under way end with `UNAVAILABLE`, and every call is
    /// refused until ``restore()``.
    package func cut() async {
        let transport = current.withLock { current in
            defer { current = nil }
            return current
        }
        await transport?.close()
    }

    /// Reaches the service again over a fresh transport, unless closed or not cut.
    package func restore() {
        current.withLock { current in
            guard !isClosed, current == nil else { return }
            current = connect()
        }
    }
}
#endif
