import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

/// A client that asks and never reads cannot make the gateway hold its answers: the gateway's
/// default deadline (`--default-timeout-ms`) ends its side of a call sent without `grpc-timeout`
/// too, and an answer still unsent then is reset rather than kept.
@Suite("Answers nobody reads", .serialized)
struct UnreadAnswerLiveTests {
    @Test("a call without grpc-timeout whose answer waits on a shut window is reset at the gateway's default deadline")
    func shutWindowResetAtDefaultDeadline() async throws {
        try await withLiveGateway(gatewayArguments: ["--default-timeout-ms", "300"]) { stack in
            let port = try stack.service(.gateway).port
            // SETTINGS_INITIAL_WINDOW_SIZE 0 and never a WINDOW_UPDATE: the answer's DATA, and
            // the trailers behind it, cannot go out.
            let socket = try RawSocket(port: port)
            socket.send(HTTP2Bytes.unaryRequest(path: CatalogContract.getProduct.path, message: #"{"id":7}"#, settings: [(4, 0)]))
            let (received, _) = await socket.readUntilClosed(timeout: .seconds(3))
            socket.close()
            let frames = HTTP2Bytes.parseFrames(received)
            let headers = frames.contains { $0.type == HTTP2Bytes.headers && $0.stream == 1 }
            let data = frames.contains { $0.type == HTTP2Bytes.data && $0.stream == 1 }
            let reset = frames.contains { $0.type == 3 && $0.stream == 1 }
            #expect(headers, "the gateway never answered stream 1 (so the answer was not waiting on the window); frames: \(frames)")
            #expect(!data, "DATA sent into a shut window: \(frames)")
            #expect(reset, "stream 1 was not reset at the 300 ms default deadline; frames: \(frames)")
            // The gateway serves on.
            let product = try await stack.gateway.unary(CatalogContract.getProduct, GetProductRequest(id: 7), options: plain())
            #expect(product.product.id == 7)
        }
    }
}
