import Foundation
import Logging
import RPC
import RPCHTTP2
import Testing

/// `ServerContext.arrival` is when the call reached the server (its headers), not when its
/// handler started: a default deadline counted from it (the gateway's) includes the time the
/// request took to arrive.
@Suite("A call's arrival time")
struct CallArrivalLiveTests {
    static let method = MethodInfo(
        service: "test.arrival.v1.ArrivalService", method: "Age", kind: .unary, auth: .none, idempotent: false,
        requestFields: [], responseFields: [])

    @Test("a unary handler, started once the request has arrived, sees the arrival of the call's headers")
    func arrivalIsTheHeaders() async throws {
        var router = Router()
        router.register(Self.method) { io, context in
            _ = try await io.nextMessage()
            let age = ContinuousClock.now - context.arrival
            try await io.write(Data(String(age / .milliseconds(1)).utf8))
        }
        let server = try HTTP2Server(
            configuration: ServerConfiguration(host: "127.0.0.1", port: 0), router: router,
            logger: Logger(label: "arrival-tests") { _ in SwiftLogNoOpLogHandler() })
        let client = try RPCClient(target: SocketAddressText(host: "127.0.0.1", port: try server.start()))
        let before = ContinuousClock.now
        let answer = try await client.withCall(path: Self.method.path, options: CallOptions(timeout: .seconds(10))) { call in
            // The headers go now; the request message 200 ms later.
            try await Task.sleep(for: .milliseconds(200))
            try await call.send(Data("{}".utf8))
            call.finishSending()
            return try await call.nextMessage()
        }
        let elapsed = ContinuousClock.now - before
        await client.close()
        await server.shutdown()
        let ageMilliseconds = try #require(answer.flatMap { Double(String(decoding: $0, as: UTF8.self)) })
        // About 200 ms: the headers may leave a few ms after the sleep began (the connection is
        // made first), so not quite. Were arrival the handler's start, it would be about 0.
        #expect(ageMilliseconds >= 150, "the handler saw the call \(ageMilliseconds) ms old")
        #expect(.milliseconds(ageMilliseconds) <= elapsed, "older than the whole call (\(elapsed))")
    }
}
