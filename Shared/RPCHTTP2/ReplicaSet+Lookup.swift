public import RPC
internal import Foundation
internal import SystemCalls

extension ReplicaSet {
    /// Looks every target up with the system's resolver, on a thread of its own (a lookup may
    /// block on DNS): each name becomes every address it has, numeric, with the target's port,
    /// in the order the resolver gives them, duplicates dropped. nil when any lookup fails, so
    /// that a DNS outage leaves the members as they were.
    public static let systemLookup: Resolve = { targets in
        await withCheckedContinuation { (continuation: CheckedContinuation<[SocketAddressText]?, Never>) in
            let thread = Thread {
                continuation.resume(returning: lookUp(targets))
            }
            thread.name = "replica lookup"
            thread.start()
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
