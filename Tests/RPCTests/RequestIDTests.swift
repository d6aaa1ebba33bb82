import RPC
import Testing

@Suite("RequestID")
struct RequestIDTests {
    @Test("a request id is 16 lower-case hex digits")
    func format() {
        for _ in 0..<200 {
            let id = RequestID.make()
            #expect(id.count == 16)
            #expect(id.allSatisfy { "0123456789abcdef".contains($0) }, "\(id)")
        }
    }

    @Test("request ids differ from call to call")
    func unique() {
        let ids = Set((0..<1_000).map { _ in RequestID.make() })
        #expect(ids.count == 1_000)
    }
}
