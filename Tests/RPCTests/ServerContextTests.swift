import Logging
import RPC
import Testing

struct ServerContextTests {
    @Test("the host of a peer address, without its port or an IPv6 address's brackets", arguments: [
        ("127.0.0.1:5000", "127.0.0.1"), ("[::1]:443", "::1"), ("[2001:db8::2]:8080", "2001:db8::2"), ("unix", "unix"),
        ("localhost:7001", "localhost"),
    ])
    func peerHost(peer: String, host: String) {
        let context = ServerContext(method: Notes.callback, metadata: [:], deadline: nil, requestID: "r", peer: peer, logger: Logger(label: "t"))
        #expect(context.peerHost == host)
    }
}
