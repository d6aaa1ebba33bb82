import Contracts
import RPC
import Testing

@testable import shopctl

/// `describe NAME` finds message types by name, in any case, and methods in the forms `call`
/// takes (issue 27, points 5 and 6).
@Suite("describe: messages by name, methods as call names them")
struct DescribeMessageTests {
    /// Services as the gateway's Describe lists them.
    private static let services = [CatalogContract.service, OrderContract.service].map { name in
        ServiceDescription(
            name: name,
            methods: APIDescription.allMethods.filter { $0.service == name }.map(MethodDescription.init))
    }

    @Test("a message type by name, any case, with its fields", arguments: ["Product", "product", "PRODUCT"])
    func product(name: String) throws {
        let found = try DescribeCommand.matches(name, in: Self.services)
        #expect(found.services.isEmpty)
        #expect(found.messages == [DescribeCommand.Message(name: "Product", fields: Product.fields)])
        let text = DescribeCommand.render(found)
        #expect(text.hasPrefix("message Product\n"), "\(text)")
        #expect(text.contains("id?") && text.contains("price") && text.contains("Money"), "\(text)")
    }

    @Test("requests and responses are found by their names too")
    func requests() throws {
        #expect(try DescribeCommand.matches("ListProductsRequest", in: Self.services).messages.first?.fields == ListProductsRequest.fields)
        #expect(try DescribeCommand.matches("importproductsresponse", in: Self.services).messages.first?.name == "ImportProductsResponse")
    }

    @Test("a method in a form call takes shows that method of its service")
    func method() throws {
        let found = try DescribeCommand.matches("catalog.GetProduct", in: Self.services)
        #expect(found.services.map(\.name) == [CatalogContract.service])
        #expect(found.services.first?.methods.map(\.name) == ["GetProduct"])
    }

    @Test("a name that is a service and a message shows both")
    func both() throws {
        let found = try DescribeCommand.matches("order", in: Self.services)
        #expect(found.services.map(\.name) == [OrderContract.service])
        #expect(found.messages.map(\.name) == ["Order"])
    }

    @Test("a name matching nothing is SERVICE_NOT_FOUND with close matches")
    func unknown() {
        let error = #expect(throws: ShopctlError.self) { try DescribeCommand.matches("Prodct", in: Self.services) }
        #expect(error?.reason == "SERVICE_NOT_FOUND")
        #expect(error?.message.contains("Product") == true, "\(String(describing: error))")
    }
}
