import Contracts
import Foundation
import RPC
@testable import StorefrontKit
import Testing

/// How the Connect transport takes HTTP answers that are not a successful one, over a scripted
/// HTTP server (``ScriptedHTTPServer``): a Connect error answer is a status without response
/// headers, so an idempotent call is retried on `UNAVAILABLE` and a non-idempotent one is not;
/// a redirect is never followed.
@Suite("StorefrontKit over a scripted HTTP server: error answers and redirects")
struct ConnectHTTPAnswerTests {
    @Test("A Connect 503 UNAVAILABLE answer is retried for an idempotent call, which then succeeds")
    func unavailableAnswerRetriedWhenIdempotent() async throws {
        let server = try ScriptedHTTPServer(answering: [Self.unavailable, try Self.product()])
        let client = StorefrontClient(baseURL: server.baseURL, configuration: Self.configuration)
        let product = try await client.catalog.product(id: 1)
        #expect(product == FakeShopService.product(1))
        #expect(server.requests.map(\.path) == Array(repeating: CatalogContract.getProduct.path, count: 2))
        await client.close()
        await server.stop()
    }

    @Test("A Connect 503 UNAVAILABLE answer is not retried for a call that is not idempotent")
    func unavailableAnswerNotRetriedOtherwise() async throws {
        let server = try ScriptedHTTPServer(answering: [Self.unavailable, try Self.product()])
        let client = StorefrontClient(baseURL: server.baseURL, configuration: Self.configuration)
        let refused = await expectCode(.unavailable) { _ = try await client.auth.signUp(email: "a@example.com", password: "long enough 1") }
        #expect(refused?.message == "upstream down")
        #expect(server.requests.map(\.path) == [AuthContract.signUp.path])
        await client.close()
        await server.stop()
    }

    @Test("A 302 to a POST is not followed: the call fails UNKNOWN, naming the redirect, and nothing else is sent")
    func redirectRefused() async throws {
        let server = try ScriptedHTTPServer(answering: [
            ScriptedHTTPServer.Answer(status: 302, headers: [("location", "/elsewhere")], body: ""), try Self.product(),
        ])
        let client = StorefrontClient(baseURL: server.baseURL, configuration: Self.configuration)
        let refused = await expectCode(.unknown) { _ = try await client.catalog.product(id: 1) }
        #expect(refused?.message.contains("redirected") == true && refused?.message.contains("302 to /elsewhere") == true,
            "\(String(describing: refused))")
        // Give a followed redirect time to arrive before looking.
        try await Task.sleep(for: .milliseconds(200))
        #expect(server.requests.map(\.method) == ["POST"] && server.requests.map(\.path) == [CatalogContract.getProduct.path])
        await client.close()
        await server.stop()
    }

    /// What the gateway answers when the service behind it cannot be reached.
    static let unavailable = ScriptedHTTPServer.Answer(status: 503, body: #"{"code":"unavailable","message":"upstream down"}"#)

    /// A `GetProduct` answer: product 1.
    static func product() throws -> ScriptedHTTPServer.Answer {
        let body = try JSONCodec.shared.encode(ProductResponse(product: FakeShopService.product(1)))
        return ScriptedHTTPServer.Answer(status: 200, body: String(decoding: body, as: UTF8.self))
    }

    /// A signed-out client's configuration, its session in memory.
    static var configuration: StorefrontConfiguration {
        var configuration = StorefrontConfiguration()
        configuration.credentialStore = MemoryCredentialStore()
        return configuration
    }
}
