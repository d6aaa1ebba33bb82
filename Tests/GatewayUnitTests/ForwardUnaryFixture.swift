import Foundation
@testable import gateway
import RPC
import RPCHTTP2
import Synchronization

/// The message of the forwarding tests' methods.
struct Note: RPCMessage, Equatable {
    var text: String
    static let fields = [FieldDescriptor("text", "String")]
}

/// The methods a test gateway routes to its fake upstream.
enum NoteContract {
    static let service = "test.forward.v1.NoteService"
    /// Idempotent: answers the request as it came.
    static let get = MethodDescriptor<Note, Note>(service: service, method: "Get", kind: .unary, idempotent: true)
    /// Not idempotent: answers the request as it came.
    static let put = MethodDescriptor<Note, Note>(service: service, method: "Put", kind: .unary)
    /// Admin: answers the request as it came.
    static let adminPut = MethodDescriptor<Note, Note>(service: service, method: "AdminPut", kind: .unary, auth: .admin)
    /// Answers the `x-request-id` and `x-note` it was called with.
    static let whoAmI = MethodDescriptor<Note, Note>(service: service, method: "WhoAmI", kind: .unary)
    /// Fails with NOT_FOUND `NOTE_NOT_FOUND` and a detail.
    static let fail = MethodDescriptor<Note, Note>(service: service, method: "Fail", kind: .unary, idempotent: true)
    /// Sleeps 30 s unless cancelled.
    static let hang = MethodDescriptor<Note, Note>(service: service, method: "Hang", kind: .unary)

    static let all = [get, put, adminPut, whoAmI, fail, hang]
}

/// What the fake upstream saw. Thread-safe.
final class UpstreamLog: Sendable {
    private let state = Mutex<(calls: [String: Int], hangStarted: Int, hangCancelled: Int)>(([:], 0, 0))

    func called(_ method: String) { state.withLock { $0.calls[method, default: 0] += 1 } }
    func calls(_ method: String) -> Int { state.withLock { $0.calls[method, default: 0] } }
    func hangStarted() { state.withLock { $0.hangStarted += 1 } }
    func hangCancelled() { state.withLock { $0.hangCancelled += 1 } }
    var started: Int { state.withLock { $0.hangStarted } }
    var cancelled: Int { state.withLock { $0.hangCancelled } }
}

/// A gateway in front of one upstream, as `GatewayServer.build` wires it: the admin-key and
/// rate-limit interceptors, a proxy route per method, the upstream's client on the gateway's loop.
struct TestGateway {
    let server: HTTP2Server
    let upstream: Upstream
    let router: Router
    /// A client of the gateway.
    let client: RPCClient
}
