internal import RPC
internal import Foundation
internal import Synchronization
internal import SystemCalls

/// Looks up one upstream's host name on a thread of its own (a lookup may block on DNS), one
/// lookup at a time: connection attempts that need the address while a lookup runs wait for its
/// answer instead of starting another thread. A lookup can block for tens of seconds while DNS
/// is down — longer than a connect timeout — so a thread per attempt piled up, one more every
/// few seconds for as long as the outage lasted. Thread-safe; one per ``RPCClient``.
final class HostResolver: Sendable {
    typealias Answer = Result<ResolvedAddress?, SystemError>
    typealias Lookup = @Sendable (SocketAddressText) throws(SystemError) -> ResolvedAddress?

    private let target: SocketAddressText
    private let lookup: Lookup
    /// Those waiting for the lookup under way; nil while none runs.
    private let waiting = Mutex<[@Sendable (Answer) -> Void]?>(nil)

    /// A resolver of `target`'s host with `lookup` (by default the system's resolver).
    init(target: SocketAddressText, lookup: @escaping Lookup = { target throws(SystemError) in
        try Socket.resolve(target, passive: false).first
    }) {
        self.target = target
        self.lookup = lookup
    }

    /// Calls `completion` with the first address of the target's host (nil when it has none),
    /// on the lookup's thread: the lookup under way, or one started now.
    func resolve(_ completion: @escaping @Sendable (Answer) -> Void) {
        let start = waiting.withLock { waiting -> Bool in
            guard waiting == nil else {
                waiting?.append(completion)
                return false
            }
            waiting = [completion]
            return true
        }
        guard start else { return }
        let thread = Thread { [self] in
            // Not confined to a pinned loop's one CPU, whose thread may have started this one.
            System.runCurrentThread(on: System.allowedCPUs)
            let answer = Answer { () throws(SystemError) in try lookup(target) }
            let completions = waiting.withLock { waiting in
                defer { waiting = nil }
                return waiting ?? []
            }
            for completion in completions { completion(answer) }
        }
        thread.name = "resolve \(target.host)"
        thread.start()
    }
}
