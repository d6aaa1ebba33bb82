import Contracts
import Foundation
import RPC
import Testing
import JSON

/// Absent fields take their documented defaults, and unknown enum values are rejected.
@Suite("Defaults and enums")
struct DefaultDecodingTests {
    private static func decode<Message: Decodable>(_ type: Message.Type, _ json: String) throws -> Message {
        try JSONDecoder().decode(type, from: Data(json.utf8))
    }

    @Test("requests whose fields are all optional decode from {} with the documented defaults")
    func emptyObjects() throws {
        let products = try Self.decode(ListProductsRequest.self, "{}")
        #expect(products == ListProductsRequest())
        #expect(products.effectiveSort == .relevance)
        #expect(products.effectivePageSize == 20)
        #expect(products.effectivePageToken == "")

        let favorites = try Self.decode(ListFavoritesRequest.self, "{}")
        #expect(favorites.effectivePageSize == 20 && favorites.effectivePageToken == "")
        let orders = try Self.decode(ListOrdersRequest.self, "{}")
        #expect(orders.effectivePageSize == 20 && orders.effectivePageToken == "")
        let home = try Self.decode(GetHomeRequest.self, "{}")
        #expect(home.category == nil && home.effectivePageSize == 20)

        #expect(try Self.decode(SignOutRequest.self, "{}").scope == .local)
        #expect(try Self.decode(DeleteAccountRequest.self, "{}").password == nil)
        #expect(try Self.decode(ClearBasketRequest.self, "{}").expectedVersion == nil)
        #expect(try Self.decode(Empty.self, "{}") == Empty())
    }

    @Test("a null optional field counts as absent")
    func nullIsAbsent() throws {
        #expect(try Self.decode(SignOutRequest.self, #"{"scope":null}"#).scope == .local)
        #expect(try Self.decode(ListProductsRequest.self, #"{"pageSize":null,"sort":null}"#) == ListProductsRequest())
    }

    @Test("AddItem's count is 1 when absent")
    func addItemCount() throws {
        #expect(try Self.decode(AddItemRequest.self, #"{"productId":7}"#) == AddItemRequest(productId: 7, count: 1))
        #expect(try Self.decode(AddItemRequest.self, #"{"productId":7,"count":3}"#).count == 3)
    }

    @Test("a product without an id, as admins send it, decodes with id 0")
    func productWithoutId() throws {
        var members = try JSONDecoder().decode([String: JSONValue].self, from: JSONEncoder().encode(Samples.product))
        members["id"] = nil
        let request = try JSONDecoder().decode(
            UpsertProductRequest.self, from: JSONEncoder().encode(JSONValue.object(["product": .object(members)])))
        #expect(request.product.id == 0)
        #expect(request.product.title == Samples.product.title)
    }

    @Test(
        "the effective page size defaults to 20 and is capped at 100",
        arguments: [(nil, 20), (0, 20), (-5, 20), (1, 1), (20, 20), (100, 100), (101, 100), (Int.max, 100)] as [(Int?, Int)])
    func pageSize(requested: Int?, effective: Int) {
        #expect(ListOrdersRequest(pageSize: requested).effectivePageSize == effective)
    }

    @Test("a negative page size is INVALID_ARGUMENT naming pageSize")
    func negativePageSize() throws {
        let error = try #require(throws: RPCError.self) { try ListProductsRequest(pageSize: -1).validatePageSize() }
        #expect(error.code == .invalidArgument)
        #expect(error.details?["fieldViolations"]?.arrayValue?.first?["field"]?.stringValue == "pageSize")
        try ListProductsRequest(pageSize: 0).validatePageSize()
        try ListProductsRequest().validatePageSize()
    }

    @Test(
        "an unknown enum value is MALFORMED_MESSAGE",
        arguments: [
            ("ListProductsRequest", #"{"sort":"CHEAPEST"}"#),
            ("SignOutRequest", #"{"scope":"everywhere"}"#),
            ("WatchAuthStateResponse", #"{"state":"MAYBE"}"#),
            ("Order.status", #"{"status":"SHIPPED"}"#),
        ])
    func unknownEnumValue(type: String, json: String) throws {
        let data = Data(json.utf8)
        let error = try #require(throws: RPCError.self) {
            switch type {
            case "ListProductsRequest": _ = try JSONCodec.shared.decode(ListProductsRequest.self, from: data)
            case "SignOutRequest": _ = try JSONCodec.shared.decode(SignOutRequest.self, from: data)
            case "WatchAuthStateResponse": _ = try JSONCodec.shared.decode(WatchAuthStateResponse.self, from: data)
            default: _ = try JSONCodec.shared.decode(StatusOnly.self, from: data)
            }
        }
        #expect(error.code == .invalidArgument)
        #expect(error.reason == "MALFORMED_MESSAGE")
    }

    @Test("every enum value decodes from its documented spelling")
    func knownEnumValues() throws {
        #expect(ProductSort.allCases.map(\.rawValue) == ["RELEVANCE", "PRICE_ASC", "PRICE_DESC", "RATING"])
        #expect(SignOutScope.allCases.map(\.rawValue) == ["local", "global"])
        #expect(IdentityProvider.allCases.map(\.rawValue) == ["google", "apple", "kakao", "naver"])
        #expect(AuthState.allCases.map(\.rawValue) == ["SIGNED_IN", "SIGNED_OUT"])
        #expect(OrderStatus.allCases.map(\.rawValue) == ["PENDING", "PAID", "PAYMENT_FAILED", "CANCELLED"])
        for status in OrderStatus.allCases {
            #expect(try Self.decode(StatusOnly.self, #"{"status":"\#(status.rawValue)"}"#).status == status)
        }
    }

    @Test("a provider API.md does not name still decodes, so auth-svc can answer UNSUPPORTED_PROVIDER")
    func unknownProviderDecodes() throws {
        let request = try JSONCodec.shared.decode(
            SignInWithIdTokenRequest.self, from: Data(#"{"provider":"facebook","idToken":"t"}"#.utf8))
        #expect(request.provider.rawValue == "facebook")
        #expect(!IdentityProvider.allCases.contains(request.provider))
    }

    @Test("logging a request or session never prints a secret")
    func redaction() {
        let secrets = ["correct horse", "new password", "old password", "t-1", "eyJ", "refresh-1", "n-1", "4242", "042", "2030"]
        let described: [any Sendable] = [
            SignUpRequest(email: "a@b.c", password: "correct horse"), SignInRequest(email: "a@b.c", password: "correct horse"),
            VerifyEmailRequest(token: "t-1"), ResetPasswordRequest(token: "t-1", newPassword: "new password"),
            ChangePasswordRequest(currentPassword: "old password", newPassword: "new password"),
            DeleteAccountRequest(password: "correct horse"), RefreshSessionRequest(refreshToken: "refresh-1"),
            SignInWithIdTokenRequest(provider: .apple, idToken: "eyJ.id", rawNonce: "n-1"), Samples.session, Samples.card,
            PlaceOrderRequest(shippingAddress: Samples.address, payment: Samples.card),
        ]
        for value in described {
            for text in [String(describing: value), String(reflecting: value), "\(value)"] {
                #expect(!secrets.contains { text.contains($0) }, "\(text)")
            }
        }
    }
}

/// A message with only an order status, to test the enum on its own.
private struct StatusOnly: Codable {
    var status: OrderStatus
}
