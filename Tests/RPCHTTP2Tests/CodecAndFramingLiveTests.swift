import Contracts
import Foundation
import Logging
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

extension LiveTests {
    /// What a request's content type and framing may be: JSON only (except where a method speaks
    /// protobuf, as health does), and a badly framed request is the client's fault — answered
    /// through the nghttp CLI, a real HTTP/2 client that prints the trailers it gets.
    @Suite("Codecs and request framing")
    struct CodecAndFramingLiveTests {
        static let nghttp = "/usr/bin/nghttp"

        /// One call of `path` by nghttp with `contentType` and `body`; its verbose output.
        static func call(_ live: LiveServer, path: String, contentType: String, body: [UInt8]) async throws -> String {
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("codec-\(UUID().uuidString).bin")
            try Data(body).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let result = try await ChildProcess.run(
                executable: nghttp,
                arguments: ["-v", "-H", "content-type: \(contentType)", "-H", "te: trailers", "-d", file.path,
                            "http://127.0.0.1:\(live.port)\(path)"],
                timeout: .seconds(10))
            return result.output
        }

        static func framed(_ text: String) -> [UInt8] { Array(MessageFraming.frame(Data(text.utf8))) }

        @Test("application/grpc+proto and other codecs are UNIMPLEMENTED/UNSUPPORTED_CODEC on a JSON method",
              arguments: ["application/grpc+proto", "application/grpc+thrift", "application/grpc+jsonx"])
        func unsupportedCodec(contentType: String) async throws {
            try #require(FileManager.default.isExecutableFile(atPath: Self.nghttp), "install nghttp2-client")
            try await withLiveServer { live in
                let output = try await Self.call(
                    live, path: EchoContract.unary.path, contentType: contentType, body: Self.framed(#"{"text":"hi"}"#))
                #expect(output.contains("grpc-status: 12"), "\(output)")
                #expect(output.contains("shop-error-reason: UNSUPPORTED_CODEC"), "\(output)")
                #expect(!output.contains(#""text""#), "the message was parsed as JSON: \(output)")
            }
        }

        @Test("JSON content types are served: +json, bare application/grpc, and with parameters",
              arguments: ["application/grpc+json", "application/grpc", "application/grpc+json; charset=utf-8"])
        func jsonCodecs(contentType: String) async throws {
            try #require(FileManager.default.isExecutableFile(atPath: Self.nghttp), "install nghttp2-client")
            try await withLiveServer { live in
                let output = try await Self.call(
                    live, path: EchoContract.unary.path, contentType: contentType, body: Self.framed(#"{"text":"hi"}"#))
                #expect(output.contains("grpc-status: 0"), "\(output)")
            }
        }

        @Test("health, which speaks protobuf, answers application/grpc+proto in protobuf")
        func healthSpeaksProtobuf() async throws {
            try #require(FileManager.default.isExecutableFile(atPath: Self.nghttp), "install nghttp2-client")
            try await withLiveServer { live in
                // An empty HealthCheckRequest (service "") is an empty protobuf message.
                let output = try await Self.call(
                    live, path: HealthContract.check.path, contentType: "application/grpc+proto", body: [0, 0, 0, 0, 0])
                #expect(output.contains("grpc-status: 0"), "\(output)")
            }
        }

        @Test("a request that ends inside a message is INVALID_ARGUMENT/MALFORMED_MESSAGE, logged at info")
        func truncatedRequest() async throws {
            try #require(FileManager.default.isExecutableFile(atPath: Self.nghttp), "install nghttp2-client")
            let lines = CapturedLogLines()
            try await withLiveServer(logger: lines.logger) { live in
                // A prefix announcing 100 bytes, then 3.
                let output = try await Self.call(
                    live, path: EchoContract.unary.path, contentType: "application/grpc+json", body: [0, 0, 0, 0, 100] + Array("{\"t".utf8))
                #expect(output.contains("grpc-status: 3"), "\(output)")
                #expect(output.contains("shop-error-reason: MALFORMED_MESSAGE"), "\(output)")
            }
            let line = lines.calls.first { $0.fields["reason"] == "MALFORMED_MESSAGE" }
            #expect(line?.level == .info, "\(lines.calls)")
        }

        @Test("a message flag other than 0 or 1 is INVALID_ARGUMENT/MALFORMED_MESSAGE")
        func badMessageFlag() async throws {
            try #require(FileManager.default.isExecutableFile(atPath: Self.nghttp), "install nghttp2-client")
            try await withLiveServer { live in
                var body = Self.framed(#"{"text":"hi"}"#)
                body[0] = 7
                let output = try await Self.call(live, path: EchoContract.unary.path, contentType: "application/grpc+json", body: body)
                #expect(output.contains("grpc-status: 3"), "\(output)")
                #expect(output.contains("shop-error-reason: MALFORMED_MESSAGE"), "\(output)")
            }
        }

        @Test("an error message quotes at most 64 characters of what the client sent")
        func boundedEcho() async throws {
            try #require(FileManager.default.isExecutableFile(atPath: Self.nghttp), "install nghttp2-client")
            try await withLiveServer { live in
                let path = "/interop.v1.EchoService/" + String(repeating: "N", count: 5000)
                let output = try await Self.call(live, path: path, contentType: "application/grpc+json", body: Self.framed("{}"))
                #expect(output.contains("grpc-status: 12"), "\(output)")
                let message = output.split(separator: "\n").first { $0.contains("grpc-message:") } ?? ""
                #expect(message.count < 200, "grpc-message echoes the whole path: \(message.count) characters")
            }
        }
    }
}
