import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing
import JSON

/// What only the gateway's process shows of routing (RoutingTests has the rest): the log lines
/// of the calls it refuses and of the request ids it passes on, and the socket address of each
/// client, as auth-svc counts them.
@Suite("Gateway routing, live: log lines and client addresses")
struct RoutingLiveTests {
    @Test("calls the gateway refuses for their token are logged by the gateway and never reach the service")
    func tokensCheckedAtTheGateway() async throws {
        try await withLiveGateway { stack in
            let gateway = try stack.gateway
            let requestID = "no-token-\(UUID().uuidString.prefix(8))"
            await expectRPCError(.unauthenticated, reason: "MISSING_TOKEN") {
                try await gateway.unary(BasketContract.getBasket, Empty(), options: plain([MetadataKey.requestID: requestID]))
            }
            await expectRPCError(.unauthenticated, reason: "INVALID_ACCESS_TOKEN") {
                try await gateway.unary(
                    BasketContract.getBasket, Empty(),
                    options: plain([MetadataKey.authorization: "Bearer not.a.jwt", MetadataKey.requestID: requestID]))
            }
            #expect(try stack.logged(.gateway, method: "GetBasket", requestID: requestID))
            #expect(try !stack.logged(.basket, method: "GetBasket", requestID: requestID))
        }
    }

    @Test("the request id, the client's or one the gateway assigns, reaches the service's log line")
    func requestIDPropagated() async throws {
        try await withLiveGateway { stack in
            let gateway = try stack.gateway
            let shopper = try await stack.newShopper()
            let given = "trace-me-\(UUID().uuidString.prefix(8))"
            _ = try await gateway.unary(
                BasketContract.getBasket, Empty(),
                options: CallOptions(metadata: shopper.metadata([MetadataKey.requestID: given]), timeout: .seconds(15)))
            // Both lines may trail the answer (the gateway logs a call once it has answered it).
            let serviceLogged = try await eventually(within: .seconds(5), every: .milliseconds(100)) {
                try stack.logged(.basket, method: "GetBasket", requestID: given)
            }
            #expect(serviceLogged)
            let gatewayLogged = try await eventually(within: .seconds(5), every: .milliseconds(100)) {
                try stack.logged(.gateway, method: "GetBasket", requestID: given)
            }
            #expect(gatewayLogged)

            // Without one, the gateway's id is the one the service logs.
            _ = try await gateway.unary(OrderContract.listOrders, PageRequest(), options: shopper.options())
            // The gateway logs a call once it has answered it: its line may trail the answer.
            let gatewayLine = { try stack.service(.gateway).log.lines.last { $0.contains("/ListOrders ") } }
            #expect(try await eventually(within: .seconds(5), every: .milliseconds(100)) { try gatewayLine() != nil })
            let assigned = try #require(try gatewayLine()
                .flatMap { line in line.split(separator: " ").first { $0.hasPrefix("request-id=") } }
                .map { String($0.dropFirst("request-id=".count)) })
            #expect(assigned != "-")
            #expect(try await eventually(within: .seconds(5), every: .milliseconds(100)) { try stack.logged(.order, method: "ListOrders", requestID: assigned) })
        }
    }

    @Test("auth-svc counts each client behind the gateway by its own address, whatever x-forwarded-for it sends")
    func clientAddressReachesAuth() async throws {
        // Listening on both stacks, the gateway sees a client of 127.0.0.1 and one of ::1 as two
        // addresses; without the gateway naming them, auth-svc would see its one address for both.
        try await withLiveGateway(gatewayArguments: ["--host", "::"]) { stack in
            let first = try stack.gateway
            let second = try RPCClient(target: SocketAddressText(host: "::1", port: try stack.service(.gateway).port))
            func signUp(_ client: RPCClient, metadata: Metadata = [:]) async throws -> UserResponse {
                let email = "addr-\(UUID().uuidString.prefix(8).lowercased())@example.com"
                return try await client.unary(
                    AuthContract.signUp, SignUpRequest(email: email, password: ServiceStack.shopperPassword),
                    options: CallOptions(metadata: metadata, timeout: .seconds(15)))
            }
            do {
                for _ in 0..<10 { _ = try await signUp(first) }  // auth-svc's burst per address
                await expectRPCError(.resourceExhausted, reason: "RATE_LIMITED") {
                    try await signUp(first, metadata: ["x-forwarded-for": "198.51.100.7", "x-api-key": "guess"])
                }
                _ = try await signUp(second)  // another address, another bucket
            } catch {
                await second.close()
                throw error
            }
            await second.close()
        }
    }

}
