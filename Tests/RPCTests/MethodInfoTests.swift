import RPC
import Testing

@Suite("MethodInfo")
struct MethodInfoTests {
    private func info(
        service: String = "shop.catalog.v1.CatalogService", method: String = "GetProduct", kind: MethodKind = .unary,
        auth: AuthLevel = .none, idempotent: Bool = true, requestFields: [FieldDescriptor] = [FieldDescriptor("id", "Int")]
    ) -> MethodInfo {
        MethodInfo(
            service: service, method: method, kind: kind, auth: auth, idempotent: idempotent,
            requestFields: requestFields, responseFields: [])
    }

    @Test("every field reads back as given, and the path is /service/method")
    func fields() {
        let method = info(kind: .serverStreaming, auth: .user, idempotent: false)
        #expect(method.service == "shop.catalog.v1.CatalogService")
        #expect(method.method == "GetProduct")
        #expect(method.kind == .serverStreaming)
        #expect(method.auth == .user)
        #expect(!method.idempotent)
        #expect(method.requestFields == [FieldDescriptor("id", "Int")])
        #expect(method.responseFields.isEmpty)
        #expect(method.path == "/shop.catalog.v1.CatalogService/GetProduct")
    }

    @Test("descriptions built apart are equal, with equal hashes, when every field is")
    func equalDescriptions() {
        let a = info()
        let b = info()
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        #expect(Set([a, b, a]).count == 1)
    }

    @Test("a difference in any field makes descriptions unequal")
    func unequalDescriptions() {
        let base = info()
        let others = [
            info(service: "shop.basket.v1.BasketService"), info(method: "ListProducts"), info(kind: .bidirectionalStreaming),
            info(auth: .admin), info(idempotent: false), info(requestFields: []),
        ]
        for other in others { #expect(base != other) }
        #expect(Set(others + [base]).count == others.count + 1)
    }
}
