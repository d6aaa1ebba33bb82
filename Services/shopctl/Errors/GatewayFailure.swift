import RPC

/// The gateway itself failing a call, as opposed to a service behind it: its host name does
/// not resolve (`GATEWAY_HOST_UNKNOWN`), or no connection to its address could be made
/// (`GATEWAY_UNREACHABLE`). Both are `UNAVAILABLE` (exit 5) and final: shopctl does not retry
/// them (``CallRetry``), since the same address fails the same way a moment later.
///
/// A connection that was made and then lost before the answer (closed, a missed keepalive, a
/// gateway's graceful restart) is neither: it stays the client's plain `UNAVAILABLE`, which
/// idempotent methods retry.
enum GatewayFailure {
    /// The reason of a gateway host name that does not resolve.
    static let hostUnknown = "GATEWAY_HOST_UNKNOWN"
    /// The reason of a gateway that cannot be reached: the connection refused, timed out or
    /// without a route — never made.
    static let unreachable = "GATEWAY_UNREACHABLE"

    /// Whether `error` is one of these.
    static func matches(_ error: RPCError) -> Bool {
        error.reason == hostUnknown || error.reason == unreachable
    }

    /// `error`, failed by a call to `gateway` that the gateway never answered, as the
    /// gateway's failure when it is one (the client's `UNAVAILABLE` whose cause is a
    /// ``ConnectFailure``: the connection was never made); anything else — a connection lost
    /// before the answer, a deadline, a refused stream, a cancellation — as it is.
    static func classify(_ error: RPCError, gateway: SocketAddressText) -> RPCError {
        guard error.code == .unavailable, error.reason == "UPSTREAM_UNAVAILABLE" || error.reason == nil else {
            return error
        }
        switch error.cause as? ConnectFailure {
        case .hostNotFound(let host)?:
            return RPCError(
                code: .unavailable, reason: hostUnknown,
                message: "The gateway's host name '\(host)' does not resolve (gateway \(gateway)).", cause: error)
        case let failure?:
            return RPCError(
                code: .unavailable, reason: unreachable,
                message: "Cannot reach the gateway at \(gateway): \(failure.description.lowercasedFirst).", cause: error)
        case nil where error.reason == "UPSTREAM_UNAVAILABLE":
            // Connected, then lost before the answer (closed, a missed keepalive, a graceful
            // restart). The client names it UPSTREAM_UNAVAILABLE, which from shopctl's side would
            // read as the gateway's "a service behind me is down" and be final: keep it a plain
            // UNAVAILABLE, which idempotent methods retry.
            return RPCError(
                code: .unavailable,
                message: "The gateway at \(gateway) did not answer: \(error.message.lowercasedFirst.trimmingSuffix(".")).",
                cause: error)
        case nil:
            return error
        }
    }
}

extension String {
    /// The string with its first character lower-cased ("Connection refused" → "connection refused").
    fileprivate var lowercasedFirst: String { prefix(1).lowercased() + dropFirst() }

    /// The string without one trailing `suffix`.
    fileprivate func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
