import Contracts
import RPC
import ServiceTestSupport
import Testing

/// Malformed requests only the server's framing refuses (API.md §1): a message over the
/// HTTP/2 server's 4 MiB limit. The rest of the bad input runs in process (``BadInputTests``).
@Suite("Bad input (live)")
struct BadInputLiveTests {
    @Test("a message over 4 MiB is RESOURCE_EXHAUSTED MESSAGE_TOO_LARGE, also inside an import stream")
    func tooLarge() async throws {
        try await withLiveCatalogService { stack in
            let huge = String(repeating: "x", count: 5 << 20)
            await expectRPCError(.resourceExhausted, reason: "MESSAGE_TOO_LARGE") {
                try await stack.listProducts(ListProductsRequest(query: huge))
            }
            let before = try await stack.listProducts().totalSize
            await expectRPCError(.resourceExhausted, reason: "MESSAGE_TOO_LARGE") {
                try await stack.importProducts([SampleProducts.make("Fine"), SampleProducts.make("Bloated", description: huge)])
            }
            #expect(await stack.isServing())
            #expect(try await stack.listProducts().totalSize <= before + 1)
        }
    }
}
