import Foundation
import Logging
import RPC
import RPCHTTP2
import ServiceTestSupport
import Synchronization
import Testing

/// HTTP/2 requests that are not gRPC (another content type, or not POST) go to the server's
/// web handler, on the same connections as gRPC calls; the answer is plain HTTP/2 — no gRPC
/// framing, no trailers. curl with prior knowledge plays the client.
@Suite("HTTP/2 requests that are not gRPC")
struct HTTP2WebRequestLiveTests {
    static func curl(_ port: Int, _ arguments: [String]) async throws -> Command.Result {
        try await Command.run(
            "curl", ["-s", "-i", "--http2-prior-knowledge", "--max-time", "10"] + arguments.dropLast() + ["http://127.0.0.1:\(port)\(arguments.last!)"],
            timeout: .seconds(20))
    }

    @Test("a GET and a POST with a body are served by the web handler, answered over HTTP/2 with their headers")
    func served() async throws {
        try await HTTP1ConnectionLiveTests.withServer { port, web in
            let get = try await Self.curl(port, ["-H", "x-test: h2", "/echo?a=b"])
            #expect(get.output.hasPrefix("HTTP/2 200"), "\(get)")
            #expect(get.output.contains("GET /echo q=a=b HTTP/2 x=h2 body="))
            let post = try await Self.curl(port, ["-H", "content-type: application/json", "--data-binary", "{\"a\":1}", "/echo"])
            #expect(post.output.contains("POST /echo q=- HTTP/2 x=- body={\"a\":1}"), "\(post)")
            #expect(!post.output.contains("grpc-status"))
            #expect(web.served.load(ordering: .relaxed) == 2)
        }
    }

    @Test("a streamed answer arrives whole; HEAD gets no body")
    func streamedAndHead() async throws {
        try await HTTP1ConnectionLiveTests.withServer { port, _ in
            let stream = try await Self.curl(port, ["/stream"])
            #expect(stream.output.hasSuffix("onetwothree"), "\(stream)")
            let head = try await Self.curl(port, ["-I", "/big?n=10"])
            #expect(head.output.contains("content-length: 10"), "\(head)")
        }
    }

    @Test("a body over the message size limit is refused 413")
    func bodyTooLarge() async throws {
        try await HTTP1ConnectionLiveTests.withServer(configure: { $0.maxMessageSize = 1000 }) { port, web in
            let big = String(repeating: "x", count: 5000)
            let answer = try await Self.curl(port, ["-H", "content-type: text/plain", "--data-binary", big, "/echo"])
            #expect(answer.output.hasPrefix("HTTP/2 413"), "\(answer)")
            #expect(web.served.load(ordering: .relaxed) == 0)
        }
    }

    @Test("gRPC-Web (application/grpc-web…, which starts like gRPC's type) goes to the web handler")
    func grpcWebIsWeb() async throws {
        try await HTTP1ConnectionLiveTests.withServer { port, web in
            let answer = try await Self.curl(port, ["-H", "content-type: application/grpc-web+json", "--data-binary", "x", "/echo"])
            #expect(answer.output.contains("POST /echo q=- HTTP/2 x=- body=x"), "\(answer)")
            #expect(web.served.load(ordering: .relaxed) == 1)
        }
    }

    @Test("a deadline set on an answer fires on the stream's timer when the answer is late, and never after it ended")
    func deadlines() async throws {
        try await HTTP1ConnectionLiveTests.withServer { port, web in
            let late = try await Self.curl(port, ["/deadline"])
            #expect(late.output.hasPrefix("HTTP/2 504"), "\(late)")
            let inTime = try await Self.curl(port, ["/deadline?answer"])
            #expect(inTime.output.hasPrefix("HTTP/2 200"), "\(inTime)")
            try await Task.sleep(for: .milliseconds(300))
            #expect(web.deadlinesFired.load(ordering: .relaxed) == 1, "the deadline of an answer that had ended fired")
        }
    }

    @Test("gRPC calls on the same connection are untouched")
    func grpcUntouched() async throws {
        try await HTTP1ConnectionLiveTests.withServer { port, web in
            let client = try RPCClient(target: SocketAddressText(host: "127.0.0.1", port: port))
            let answer = try await client.unary(EchoContract.unary, TextMessage(text: "grpc"))
            await client.close()
            #expect(answer.text == "grpc")
            #expect(web.served.load(ordering: .relaxed) == 0)
        }
    }
}
