import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceKit
import Testing

// Health/Check and Describe are immediate methods in every process.
extension LiveTests.ImmediateHandlerLiveTests {
    @Test("Health/Check and Describe are registered immediate; Watch is not")
    func standardServicesAreImmediate() throws {
        var router = Router()
        router.addStandardServices(health: HealthMonitor())
        #expect(try #require(router.method(forPath: HealthContract.check.path)).immediateHandler != nil)
        #expect(try #require(router.method(forPath: MetaContract.describe.path)).immediateHandler != nil)
        #expect(try #require(router.method(forPath: HealthContract.watch.path)).immediateHandler == nil)
    }

    @Test("Health/Check's immediate handler answers protobuf for application/grpc and JSON for +json")
    func healthImmediateHandler() throws {
        let health = HealthMonitor()
        health.setStatus(.notServing, for: "shop.v1.Basket")
        var router = Router()
        router.addStandardServices(health: health)
        let method = try #require(router.method(forPath: HealthContract.check.path))
        let check = try #require(method.immediateHandler)
        func context(_ contentType: String) -> ServerContext {
            ServerContext(
                method: method.info, metadata: Metadata(), deadline: nil, requestID: "health", peer: "127.0.0.1:1",
                contentType: contentType, logger: quietLogger)
        }
        // Protobuf: an empty request asks about the whole process; field 1, varint 1 = SERVING.
        #expect(try check(Data(), context("application/grpc")) == Data([0x08, 0x01]))
        #expect(try check(Self.protobufRequest(service: "shop.v1.Basket"), context("application/grpc")) == Data([0x08, 0x02]))
        let unknown = try #require(throws: RPCError.self) {
            try check(Self.protobufRequest(service: "no.such.Service"), context("application/grpc+proto"))
        }
        #expect(unknown.code == .notFound)
        // JSON, by content type or by a JSON body under bare application/grpc.
        for contentType in ["application/grpc+json", "application/grpc"] {
            let answer = try check(Data(#"{"service":"shop.v1.Basket"}"#.utf8), context(contentType))
            #expect(try JSONCodec.shared.decode(HealthCheckResponse.self, from: answer) == HealthCheckResponse(status: .notServing))
        }
    }

    /// A protobuf `HealthCheckRequest`: field 1 (length-delimited) = `service`.
    static func protobufRequest(service: String) -> Data {
        Data([0x0A, UInt8(service.utf8.count)] + Array(service.utf8))
    }

    @Test("Health/Check answers protobuf over the wire to a standard client (nghttp) and JSON to ours")
    func healthOverTheWire() async throws {
        let nghttp = "/usr/bin/nghttp"
        guard FileManager.default.isExecutableFile(atPath: nghttp) else {
            Issue.record("nghttp is required for this test: install it with `apt-get install nghttp2-client`")
            return
        }
        try await Self.withServer { fixture in
            fixture.health.setStatus(.notServing, for: "shop.v1.Basket")
            let json = try await fixture.client.unary(HealthContract.check, HealthCheckRequest(service: "shop.v1.Basket"))
            #expect(json.status == .notServing)

            // Calls Check with a protobuf request under `application/grpc`; returns nghttp's verbose output.
            func protobufCheck(service: String) async throws -> String {
                let body = FileManager.default.temporaryDirectory.appendingPathComponent("immediate-health-\(UUID().uuidString).bin")
                let message = Self.protobufRequest(service: service)
                try (Data([0, 0, 0, 0, UInt8(message.count)]) + message).write(to: body)
                defer { try? FileManager.default.removeItem(at: body) }
                let result = try await ChildProcess.run(
                    executable: nghttp,
                    arguments: ["-v", "-H", "content-type: application/grpc", "-H", "te: trailers", "-d", body.path,
                                "http://127.0.0.1:\(fixture.port)\(HealthContract.check.path)"],
                    timeout: .seconds(10))
                #expect(result.status == 0, "nghttp output:\n\(result.output)")
                return result.output
            }
            // One gRPC frame of 2 bytes: field 1 = 1 (SERVING) or 2 (NOT_SERVING).
            let serving = try await protobufCheck(service: "")
            #expect(serving.contains("grpc-status: 0"), "nghttp output:\n\(serving)")
            #expect(serving.contains("content-type: application/grpc"), "nghttp output:\n\(serving)")
            #expect(serving.contains("recv DATA frame <length=7"), "nghttp output:\n\(serving)")
            #expect(serving.contains("\u{0}\u{0}\u{0}\u{0}\u{2}\u{8}\u{1}"), "nghttp output:\n\(serving)")
            let notServing = try await protobufCheck(service: "shop.v1.Basket")
            #expect(notServing.contains("grpc-status: 0"), "nghttp output:\n\(notServing)")
            #expect(notServing.contains("\u{0}\u{0}\u{0}\u{0}\u{2}\u{8}\u{2}"), "nghttp output:\n\(notServing)")
            let unknown = try await protobufCheck(service: "no.such.Service")
            #expect(unknown.contains("grpc-status: 5"), "nghttp output:\n\(unknown)")
            #expect(unknown.contains("SERVICE_UNKNOWN"), "nghttp output:\n\(unknown)")
        }
    }
}
