import Contracts
import RPC
import ServiceTestSupport
import Testing

/// Malformed requests only the server's framing refuses (API.md §1): a message over the
/// HTTP/2 server's 4 MiB limit. The rest of the bad input runs in process (``BadInputTests``).
@Suite("Bad input (live)")
struct BadInputLiveTests {
    @Test("a message over 4 MiB is RESOURCE_EXHAUSTED MESSAGE_TOO_LARGE, and the service keeps serving")
    func tooLarge() async throws {
        try await withLiveAuthService { service in
            let email = String(repeating: "a", count: 5 << 20) + "@example.com"
            await expectRPCError(.resourceExhausted, reason: "MESSAGE_TOO_LARGE") { try await service.signUp(email) }
            #expect(await service.isServing())
        }
    }
}
