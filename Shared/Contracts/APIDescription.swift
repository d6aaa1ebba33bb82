public import Foundation
public import RPC

/// The whole public and internal API of Storefront as one canonical value: every service with
/// its methods (kind, auth level, idempotency, request and response fields) and every named
/// message those fields refer to, with its own fields.
///
/// Built from each contract's method list and each message's `fields`; printed as canonical
/// JSON (sorted, pretty) for the committed snapshot `Tests/Contracts/api-snapshot.json` that
/// the breaking-change check compares against on every test run. In JSON a message is an
/// object of field name to type, `?` marking an optional field:
/// `"Money": {"amount": "Int", "currency": "String"}`; a method is
/// `{"auth", "idempotent", "kind", "request": {…}, "response": {…}}` under its service.
public struct APIDescription: Codable, Sendable, Hashable {
    /// One service and its methods, sorted by name.
    public struct Service: Sendable, Hashable {
        /// Fully qualified name, e.g. `shop.catalog.v1.CatalogService`.
        public var name: String
        /// The methods, sorted by name.
        public var methods: [Method]

        /// Creates a service description; methods are sorted by name.
        public init(name: String, methods: [Method]) {
            self.name = name
            self.methods = methods.sorted { $0.name < $1.name }
        }
    }

    /// One method: how it streams, who may call it, and the fields of its messages.
    public struct Method: Sendable, Hashable {
        /// The method name, e.g. `GetProduct`.
        public var name: String
        /// How many messages flow each way.
        public var kind: MethodKind
        /// Who may call it.
        public var auth: AuthLevel
        /// Whether clients may retry it after `UNAVAILABLE`.
        public var idempotent: Bool
        /// The request message's fields, sorted by name.
        public var request: [FieldDescriptor]
        /// The response message's fields, sorted by name.
        public var response: [FieldDescriptor]

        /// Creates a method description; fields are sorted by name.
        public init(
            name: String, kind: MethodKind, auth: AuthLevel, idempotent: Bool, request: [FieldDescriptor],
            response: [FieldDescriptor]
        ) {
            self.name = name
            self.kind = kind
            self.auth = auth
            self.idempotent = idempotent
            self.request = request.sorted { $0.name < $1.name }
            self.response = response.sorted { $0.name < $1.name }
        }

        /// The description of `info`.
        public init(_ info: MethodInfo) {
            self.init(
                name: info.method, kind: info.kind, auth: info.auth, idempotent: info.idempotent,
                request: info.requestFields, response: info.responseFields)
        }
    }

    /// A named message that fields refer to by its type name (`Money`, `[Product]`…).
    public struct Message: Sendable, Hashable {
        /// The type name as fields spell it.
        public var name: String
        /// Its fields, sorted by name.
        public var fields: [FieldDescriptor]

        /// Creates a message description; fields are sorted by name.
        public init(name: String, fields: [FieldDescriptor]) {
            self.name = name
            self.fields = fields.sorted { $0.name < $1.name }
        }
    }

    /// The services, sorted by name.
    public var services: [Service]
    /// Every named message reachable from a method's fields, sorted by name.
    public var messages: [Message]

    /// Creates a description; services and messages are sorted by name.
    public init(services: [Service], messages: [Message]) {
        self.services = services.sorted { $0.name < $1.name }
        self.messages = messages.sorted { $0.name < $1.name }
    }

    /// The description of `methods`, with every named message their fields reach, looked up
    /// in `messageTypes` by name; names found nowhere are left out (``unresolvedTypes`` lists them).
    public init(methods: [MethodInfo], messageTypes: [String: [FieldDescriptor]]) {
        var services: [String: [Method]] = [:]
        for info in methods { services[info.service, default: []].append(Method(info)) }
        var messages: [String: Message] = [:]
        var pending = methods.flatMap { $0.requestFields + $0.responseFields }.map(\.type)
        while let type = pending.popLast() {
            let name = Self.elementType(of: type)
            guard !Self.scalarTypes.contains(name), messages[name] == nil, let fields = messageTypes[name] else { continue }
            messages[name] = Message(name: name, fields: fields)
            pending += fields.map(\.type)
        }
        self.init(
            services: services.map { Service(name: $0.key, methods: $0.value) }, messages: Array(messages.values))
    }

    /// The API as the `Contracts` target defines it now.
    public static var current: APIDescription {
        APIDescription(methods: allMethods, messageTypes: namedMessageTypes)
    }

    /// Every method of every contract: API.md §3–§7, the internal revocation feed, health and Describe.
    public static var allMethods: [MethodInfo] {
        AuthContract.all + SessionRevocationContract.all + CatalogContract.all + BasketContract.all
            + OrderContract.all + StorefrontContract.all
            + [HealthContract.check.info, HealthContract.watch.info, MetaContract.describe.info]
    }

    /// The fields of every message type that another message's field may name.
    public static var namedMessageTypes: [String: [FieldDescriptor]] {
        let types: [any RPCMessage.Type] = [
            Money.self, Rating.self, Product.self, Category.self, User.self, Session.self, JWK.self,
            BasketItem.self, Basket.self, Address.self, PaymentSummary.self, OrderItem.self, Order.self,
            CardDetails.self, ImportFailure.self, StockReservationItem.self, SessionRevocation.self,
            ServiceDescription.self, MethodDescription.self,
        ]
        var table = Dictionary(uniqueKeysWithValues: types.map { (String(describing: $0), $0.fields) })
        // `FieldDescriptor` lives in `RPC` and is no `RPCMessage`; Describe sends it as this.
        table["FieldDescriptor"] = [
            FieldDescriptor("name", "String"), FieldDescriptor("type", "String"), FieldDescriptor("optional", "Bool"),
        ]
        return table
    }

    /// Every message type by name — the named ones fields refer to (``namedMessageTypes``) and
    /// every method's request and response — for `shopctl describe Product` and the like.
    /// Not part of ``current``: the snapshot records a request or response by its fields under
    /// its method, and these names are Swift's, which the wire never carries.
    public static var allMessageTypes: [String: [FieldDescriptor]] {
        let types: [any RPCMessage.Type] = [
            Empty.self,
            // AuthService and the revocation feed.
            SignUpRequest.self, SignInRequest.self, SignInWithIdTokenRequest.self, RefreshSessionRequest.self,
            SignOutRequest.self, VerifyEmailRequest.self, ResendVerificationRequest.self,
            RequestPasswordResetRequest.self, ResetPasswordRequest.self, ChangePasswordRequest.self,
            UpdateProfileRequest.self, DeleteAccountRequest.self, UserResponse.self, GetJwksResponse.self,
            WatchAuthStateResponse.self, ListRevokedSessionsRequest.self, ListRevokedSessionsResponse.self,
            // CatalogService.
            ListProductsRequest.self, ListProductsResponse.self, GetProductRequest.self, ProductResponse.self,
            BatchGetProductsRequest.self, BatchGetProductsResponse.self, ListCategoriesResponse.self,
            AddFavoriteRequest.self, RemoveFavoriteRequest.self, ListFavoritesRequest.self, ListFavoritesResponse.self,
            UpsertProductRequest.self, DeleteProductRequest.self, ImportProductsRequest.self,
            ImportProductsResponse.self, ReserveStockRequest.self, ReleaseStockRequest.self,
            // BasketService and OrderService.
            AddItemRequest.self, UpdateItemCountRequest.self, RemoveItemRequest.self, ClearBasketRequest.self,
            PlaceOrderRequest.self, GetOrderRequest.self, ListOrdersRequest.self, ListOrdersResponse.self,
            CancelOrderRequest.self,
            // The gateway's StorefrontService, health and Describe.
            GetProductPageRequest.self, GetProductPageResponse.self, GetHomeRequest.self, GetHomeResponse.self,
            HealthCheckRequest.self, HealthCheckResponse.self, DescribeResponse.self,
        ]
        return namedMessageTypes.merging(types.map { (String(describing: $0), $0.fields) }) { named, _ in named }
    }

    /// The type names that fields use but that are neither scalars nor described messages.
    public var unresolvedTypes: [String] {
        let known = Set(messages.map(\.name)).union(Self.scalarTypes)
        let used = services.flatMap(\.methods).flatMap { $0.request + $0.response } + messages.flatMap(\.fields)
        return Set(used.map { Self.elementType(of: $0.type) }).subtracting(known).sorted()
    }

    /// The type names that are not messages.
    public static let scalarTypes: Set<String> = ["String", "Int", "Bool", "Double"]

    /// The element type of a list type (`[Product]` → `Product`), or the type itself.
    public static func elementType(of type: String) -> String {
        var name = Substring(type)
        while name.hasPrefix("["), name.hasSuffix("]") { name = name.dropFirst().dropLast() }
        return String(name)
    }

    private enum CodingKeys: String, CodingKey {
        case services, messages
    }

    /// A method as the JSON text has it, under its service and name.
    private struct MethodBody: Codable {
        var kind: MethodKind
        var auth: AuthLevel
        var idempotent: Bool
        var request: [String: String]
        var response: [String: String]
    }

    /// Reads the JSON form (services by name, methods by name, fields as type tables).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let services = try container.decode([String: [String: MethodBody]].self, forKey: .services)
        let messages = try container.decode([String: [String: String]].self, forKey: .messages)
        self.init(
            services: services.map { name, methods in
                Service(
                    name: name,
                    methods: methods.map { method, body in
                        Method(
                            name: method, kind: body.kind, auth: body.auth, idempotent: body.idempotent,
                            request: Self.fields(body.request), response: Self.fields(body.response))
                    })
            },
            messages: messages.map { Message(name: $0.key, fields: Self.fields($0.value)) })
    }

    /// Writes the JSON form ``init(from:)`` reads.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        var services: [String: [String: MethodBody]] = [:]
        for service in self.services {
            for method in service.methods {
                services[service.name, default: [:]][method.name] = MethodBody(
                    kind: method.kind, auth: method.auth, idempotent: method.idempotent,
                    request: Self.typeTable(method.request), response: Self.typeTable(method.response))
            }
        }
        try container.encode(services, forKey: .services)
        try container.encode(
            Dictionary(uniqueKeysWithValues: messages.map { ($0.name, Self.typeTable($0.fields)) }), forKey: .messages)
    }

    /// Fields as the JSON text writes them: name to type, `?` after the type of an optional one.
    private static func typeTable(_ fields: [FieldDescriptor]) -> [String: String] {
        Dictionary(uniqueKeysWithValues: fields.map { ($0.name, $0.optional ? "\($0.type)?" : $0.type) })
    }

    /// The fields of a JSON type table.
    private static func fields(_ table: [String: String]) -> [FieldDescriptor] {
        table.map { name, type in
            type.hasSuffix("?") ? FieldDescriptor(name, String(type.dropLast()), optional: true) : FieldDescriptor(name, type)
        }
    }

    /// The canonical JSON text: keys sorted, two-space indents, one trailing newline.
    public func canonicalJSON() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        var data = try encoder.encode(self)
        data.append(0x0A)
        return data
    }
}
