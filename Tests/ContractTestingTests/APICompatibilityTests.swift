import ContractTesting
import Contracts
import RPC
import Testing

/// The breaking-change check on hand-built before/after descriptions: each kind of break is
/// reported with what broke, and additive changes pass.
@Suite("API compatibility")
struct APICompatibilityTests {
    /// A small API: a shop service with a unary and a streaming method, and a `Money` message
    /// used in requests and responses.
    static func api(
        getItem: APIDescription.Method = method("GetItem"),
        extraMethods: [APIDescription.Method] = [],
        money: [FieldDescriptor] = [FieldDescriptor("amount", "Int"), FieldDescriptor("currency", "String")],
        extraServices: [APIDescription.Service] = []
    ) -> APIDescription {
        APIDescription(
            services: [
                APIDescription.Service(
                    name: "shop.test.v1.ShopService",
                    methods: [
                        getItem,
                        APIDescription.Method(
                            name: "WatchItem", kind: .serverStreaming, auth: .user, idempotent: true,
                            request: [FieldDescriptor("id", "Int")], response: [FieldDescriptor("item", "Item")]),
                    ] + extraMethods)
            ] + extraServices,
            messages: [
                APIDescription.Message(name: "Money", fields: money),
                APIDescription.Message(
                    name: "Item", fields: [FieldDescriptor("title", "String"), FieldDescriptor("price", "Money")]),
            ])
    }

    /// `GetItem`-like method: `{id, note?}` → `{item, tags}`, unary, open to anyone, idempotent.
    static func method(
        _ name: String, kind: MethodKind = .unary, auth: AuthLevel = .none, idempotent: Bool = true,
        request: [FieldDescriptor] = [FieldDescriptor("id", "Int"), FieldDescriptor("note", "String", optional: true)],
        response: [FieldDescriptor] = [FieldDescriptor("item", "Item"), FieldDescriptor("tags", "[String]")]
    ) -> APIDescription.Method {
        APIDescription.Method(name: name, kind: kind, auth: auth, idempotent: idempotent, request: request, response: response)
    }

    /// The API before every change.
    static let before = api()

    /// The breaking changes from ``before`` to `after`, as text.
    func breaks(_ after: APIDescription) -> [String] {
        APICompatibility.changes(from: Self.before, to: after).breaking.map(\.description)
    }

    @Test("an unchanged API has no changes")
    func unchanged() {
        #expect(APICompatibility.changes(from: Self.before, to: Self.before).isEmpty)
    }

    @Test("removing a method breaks, and a twin method added at once is named as the likely rename")
    func methodRemovedOrRenamed() {
        #expect(
            breaks(Self.api(getItem: Self.method("FetchItem")))
                == ["shop.test.v1.ShopService/GetItem: method removed (or renamed) — renamed to FetchItem?"])
    }

    @Test("removing a service breaks")
    func serviceRemoved() {
        let after = APIDescription(services: [], messages: Self.before.messages)
        #expect(breaks(after) == ["service shop.test.v1.ShopService: removed (or renamed), with every method"])
    }

    @Test("changing a method's kind breaks")
    func kindChanged() {
        #expect(
            breaks(Self.api(getItem: Self.method("GetItem", kind: .serverStreaming)))
                == ["shop.test.v1.ShopService/GetItem: kind changed from UNARY to SERVER_STREAMING"])
    }

    @Test("tightening auth breaks; loosening it does not")
    func authChanges() {
        #expect(
            breaks(Self.api(getItem: Self.method("GetItem", auth: .user)))
                == ["shop.test.v1.ShopService/GetItem: auth changed from NONE to USER"])
        let loosened = APIDescription(
            services: [
                APIDescription.Service(
                    name: "shop.test.v1.ShopService",
                    methods: [
                        Self.method("GetItem"),
                        APIDescription.Method(
                            name: "WatchItem", kind: .serverStreaming, auth: .optionalUser, idempotent: true,
                            request: [FieldDescriptor("id", "Int")], response: [FieldDescriptor("item", "Item")]),
                    ])
            ], messages: Self.before.messages)
        #expect(breaks(loosened) == [])
    }

    @Test("a method that stops being idempotent breaks")
    func idempotencyDropped() {
        #expect(breaks(Self.api(getItem: Self.method("GetItem", idempotent: false))).count == 1)
    }

    @Test("removing or renaming a field breaks, naming the field and the likely new name")
    func fieldRemovedOrRenamed() {
        let renamed = Self.method(
            "GetItem", response: [FieldDescriptor("product", "Item"), FieldDescriptor("tags", "[String]")])
        #expect(
            breaks(Self.api(getItem: renamed))
                == [#"shop.test.v1.ShopService/GetItem response: field "item" removed (or renamed) — renamed to product?"#])
        #expect(
            breaks(Self.api(money: [FieldDescriptor("amount", "Int")]))
                == [#"message Money: field "currency" removed (or renamed)"#])
    }

    @Test("changing a field's type breaks, in a method or a nested message")
    func typeChanged() {
        let retyped = Self.method(
            "GetItem", response: [FieldDescriptor("item", "Item"), FieldDescriptor("tags", "String")])
        #expect(
            breaks(Self.api(getItem: retyped))
                == [#"shop.test.v1.ShopService/GetItem response: field "tags" changed type from [String] to String"#])
        #expect(
            breaks(Self.api(money: [FieldDescriptor("amount", "Double"), FieldDescriptor("currency", "String")]))
                == [#"message Money: field "amount" changed type from Int to Double"#])
    }

    @Test("a request field made required breaks, and so does a new required request field")
    func requiredRequestFields() {
        let required = Self.method("GetItem", request: [FieldDescriptor("id", "Int"), FieldDescriptor("note", "String")])
        #expect(
            breaks(Self.api(getItem: required))
                == [#"shop.test.v1.ShopService/GetItem request: field "note" changed from optional to required: old requests leave it out"#])
        let added = Self.method(
            "GetItem",
            request: [
                FieldDescriptor("id", "Int"), FieldDescriptor("note", "String", optional: true),
                FieldDescriptor("store", "String"),
            ])
        #expect(
            breaks(Self.api(getItem: added))
                == [#"shop.test.v1.ShopService/GetItem request: new required field "store" (String): old requests do not send it"#])
    }

    @Test("a response field made optional breaks; a nested message used both ways follows both rules")
    func optionalResponseFields() {
        let optional = Self.method(
            "GetItem", response: [FieldDescriptor("item", "Item", optional: true), FieldDescriptor("tags", "[String]")])
        #expect(breaks(Self.api(getItem: optional)).count == 1)
        // Money travels only in responses here (Item → price): a new required field there is fine…
        #expect(
            breaks(
                Self.api(money: [
                    FieldDescriptor("amount", "Int"), FieldDescriptor("currency", "String"), FieldDescriptor("scale", "Int"),
                ])) == [])
        // …but once a request carries Money too, it is a new required request field.
        let pricedRequest = Self.method(
            "SetPrice", idempotent: false, request: [FieldDescriptor("price", "Money")], response: [])
        let before = Self.api(extraMethods: [pricedRequest])
        let after = Self.api(
            extraMethods: [pricedRequest],
            money: [FieldDescriptor("amount", "Int"), FieldDescriptor("currency", "String"), FieldDescriptor("scale", "Int")])
        #expect(
            APICompatibility.changes(from: before, to: after).breaking.map(\.description)
                == [#"message Money: new required field "scale" (Int): old requests do not send it"#])
    }

    @Test("additive changes pass and are listed: optional fields, new methods, services and messages")
    func additionsPass() {
        let widened = Self.method(
            "GetItem",
            request: [
                FieldDescriptor("id", "Int"), FieldDescriptor("note", "String", optional: true),
                FieldDescriptor("locale", "String", optional: true),
            ],
            response: [
                FieldDescriptor("item", "Item"), FieldDescriptor("tags", "[String]"), FieldDescriptor("related", "[Item]"),
            ])
        let after = Self.api(
            getItem: widened, extraMethods: [Self.method("ListItems")],
            extraServices: [APIDescription.Service(name: "shop.test.v1.OtherService", methods: [Self.method("Ping")])])
        let changes = APICompatibility.changes(from: Self.before, to: after)
        #expect(changes.breaking == [])
        #expect(
            Set(changes.additions) == [
                #"shop.test.v1.ShopService/GetItem request: field "locale" (String, optional) added"#,
                #"shop.test.v1.ShopService/GetItem response: field "related" ([Item]) added"#,
                "shop.test.v1.ShopService/ListItems added",
                "service shop.test.v1.OtherService added",
            ])
    }
}
