import Contracts
import Foundation
import Logging
import RPC
import RPCHTTP2
@testable import ServiceKit
import Testing

/// An API key is compared exactly: a key with a space or tab before or after it, or any other
/// variant, is not the key — in process and over a live server.
@Suite("API keys compared exactly")
struct APIKeyExactTests {
    /// Variants of `admin-secret` that are not it.
    static let variants = ["admin-secret ", " admin-secret", "admin-secret\t", "\tadmin-secret", "admin-secret  ", "admin-secre", "Admin-secret"]

    /// `test.admin.v1.Probe/Touch`, auth `admin`.
    static let method = MethodDescriptor<Empty, Empty>(service: "test.admin.v1.Probe", method: "Touch", kind: .unary, auth: .admin)

    @Test("in process, a variant of the key is INVALID_API_KEY", arguments: variants)
    func inProcess(variant: String) async throws {
        let interceptor = APIKeyInterceptor(adminKey: "admin-secret", internalKey: nil)
        var context = AuthFixture.context(auth: .admin, metadata: ["x-api-key": variant])
        #expect(await rpcReason { try await interceptor.prepare(&context) }?.reason == "INVALID_API_KEY")
    }

    @Test("over a live server, the key passes and a variant with a space or tab around it is refused")
    func live() async throws {
        var router = Router()
        router.addInterceptor(APIKeyInterceptor(adminKey: "admin-secret", internalKey: nil))
        router.unary(Self.method) { _, _ in Empty() }
        var logger = Logger(label: "servicekit-tests")
        logger.logLevel = .critical
        let server = try HTTP2Server(configuration: ServerConfiguration(host: "127.0.0.1", port: 0), router: router, logger: logger)
        let port = try server.start()
        defer { Task { await server.shutdown() } }
        let client = try RPCClient(target: SocketAddressText(host: "127.0.0.1", port: port))
        let call = { (key: String) in
            _ = try await client.unary(Self.method, Empty(), options: CallOptions(metadata: ["x-api-key": key], timeout: .seconds(5)))
        }
        try await call("admin-secret")
        for variant in Self.variants {
            let refused = await rpcReason { try await call(variant) }
            #expect(refused != nil, "\(variant.debugDescription) was accepted")
            // Whitespace around a field value is malformed in HTTP/2 (RFC 9113 §8.2.1): nghttp2
            // resets the stream before the interceptor sees it (the caller gets INTERNAL); any
            // other variant reaches the exact comparison.
            if let refused { #expect(refused.code == .permissionDenied || refused.code == .internal, "\(variant.debugDescription): \(refused)") }
        }
        await client.close()
    }
}
