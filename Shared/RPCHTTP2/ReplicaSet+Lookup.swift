public import RPC
internal import Foundation
internal import SystemCalls
internal import Synchronization

extension ReplicaSet {
    /// Looks every target up with the system's resolver, on a thread of its own (a lookup may
    /// block on DNS): each name becomes every address it has, numeric, with the target's port,
    /// in the order the resolver gives them, duplicates dropped. nil when any lookup fails, so
    /// that a DNS outage leaves the members as they were — or when the calling task is
    /// cancelled: it answers at once, and the lookup's late answer is dropped, so a process
    /// shutting down never waits out a resolver's timeouts.
    public static let systemLookup: Resolve = { targets in
        let answer = LookupAnswer()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<[SocketAddressText]?, Never>) in
                guard answer.wait(with: continuation) else { return }
                let thread = Thread { answer.give(lookUp(targets)) }
                thread.name = "replica lookup"
                thread.start()
            }
        } onCancel: {
            answer.give(nil)
        }
    }

    /// The addresses of `targets`, looked up now (blocking); nil when any lookup fails.
    static func lookUp(_ targets: [SocketAddressText]) -> [SocketAddressText]? {
        var found: [SocketAddressText] = []
        for target in targets {
            guard let resolved = try? Socket.resolve(target, passive: false), !resolved.isEmpty else { return nil }
            for address in resolved {
                guard let host = address.numericHost else { continue }
                let replica = SocketAddressText(host: host, port: target.port)
                if !found.contains(replica) { found.append(replica) }
            }
        }
        return found
    }
}

/// The one answer of a lookup: the thread's, or nil when the task is cancelled first —
/// whichever comes first resumes the waiting task, once.
private final class LookupAnswer: Sendable {
    private enum State {
        case idle
        case waiting(CheckedContinuation<[SocketAddressText]?, Never>)
        case answered
    }

    private let state = Mutex(State.idle)

    /// Keeps `continuation` for the answer; false (and resumed with nil) when cancelled already.
    func wait(with continuation: CheckedContinuation<[SocketAddressText]?, Never>) -> Bool {
        let answered = state.withLock { state -> Bool in
            if case .answered = state { return true }
            state = .waiting(continuation)
            return false
        }
        if answered { continuation.resume(returning: nil) }
        return !answered
    }

    /// Resumes the waiting task with `addresses`, unless it was resumed already.
    func give(_ addresses: [SocketAddressText]?) {
        let waiting = state.withLock { state -> CheckedContinuation<[SocketAddressText]?, Never>? in
            defer { state = .answered }
            if case .waiting(let continuation) = state { return continuation }
            return nil
        }
        waiting?.resume(returning: addresses)
    }
}
