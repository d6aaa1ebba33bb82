import Foundation
import Logging
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

extension LiveTests {
    /// Requests refused before they become calls (HTTP 405 for a method other than POST, 415 for
    /// a content-type not starting with `application/grpc`) get the same one log line as every
    /// call: request id, method, status, duration — plus the HTTP status the client got.
    @Suite("Log line of a refused request")
    struct RefusedRequestLogLiveTests {
        @Test("a request refused with HTTP 415 or 405 is logged once, at info, with its request id and HTTP status")
        func refusedRequestsLogged() async throws {
            let lines = CapturedLogLines()
            try await withLiveServer(logger: lines.logger) { live in
                for (method, contentType, requestID) in [
                    ("POST", "text/plain", "refused-415"), ("GET", "application/grpc+json", "refused-405"),
                ] {
                    let fields = [
                        (":method", method), (":scheme", "http"), (":path", EchoContract.unary.path), (":authority", "127.0.0.1"),
                        ("content-type", contentType), ("x-request-id", requestID),
                    ]
                    let socket = try RawSocket(port: live.port)
                    socket.send(
                        HTTP2Bytes.preface + HTTP2Bytes.frame(type: HTTP2Bytes.settings)
                            + HTTP2Bytes.frame(
                                type: HTTP2Bytes.headers, flags: HTTP2Bytes.endHeaders | HTTP2Bytes.endStream, stream: 1,
                                payload: fields.flatMap { HTTP2Bytes.literal($0.0, $0.1) }))
                    _ = await socket.readUntilClosed(timeout: .milliseconds(300))
                    socket.close()
                }
                let answer = try await live.client.unary(EchoContract.unary, TextMessage(text: "after"))
                #expect(answer.text == "after")
            }
            let calls = lines.calls
            for (requestID, httpStatus) in [("refused-415", "415"), ("refused-405", "405")] {
                let logged = calls.filter { $0.fields["request-id"] == requestID }
                #expect(logged.count == 1, "\(requestID): \(calls)")
                let line = logged.first
                #expect(line?.level == .info, "\(String(describing: line))")
                #expect(line?.fields["http-status"] == httpStatus, "\(String(describing: line))")
                // What a gRPC client makes of an HTTP status other than 200 (gRPC's HTTP mapping).
                #expect(line?.fields["status"] == "UNKNOWN", "\(String(describing: line))")
                #expect(line?.fields["method"] == EchoContract.unary.path && line?.fields["duration-ms"] != nil, "\(String(describing: line))")
            }
        }
    }
}
