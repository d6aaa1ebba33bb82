import RPC
import ServiceKit

extension ServerContext {
    /// Who the gateway counts a call against, in its rate limit and its watch cap: a signed-in
    /// caller by user id, whichever address it calls from; an anonymous one by its address.
    var clientKey: String {
        user.map { "user:\($0.id)" } ?? "address:\(peerHost)"
    }
}
