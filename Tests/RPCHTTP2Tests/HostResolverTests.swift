import Foundation
@testable import RPCHTTP2
import ServiceTestSupport
import Synchronization
import SystemCalls
import Testing
import RPC

/// `HostResolver`: one lookup at a time per upstream, its answer shared by every connection
/// attempt that asked meanwhile.
@Suite("Host resolver")
struct HostResolverTests {
    /// A lookup that blocks until released, counting its calls.
    final class BlockingLookup: Sendable {
        private let state = Mutex<(calls: Int, released: Bool)>((0, false))
        var calls: Int { state.withLock { $0.calls } }
        func release() { state.withLock { $0.released = true } }

        func callAsFunction(_ target: SocketAddressText) throws(SystemError) -> ResolvedAddress? {
            state.withLock { $0.calls += 1 }
            while !state.withLock({ $0.released }) { usleep(1000) }  // a DNS server that does not answer
            return try Socket.resolve(SocketAddressText(host: "127.0.0.1", port: target.port), passive: false).first
        }
    }

    @Test("attempts made while a lookup blocks wait for it instead of starting more; the next one looks up anew")
    func oneLookupAtATime() async throws {
        let lookup = BlockingLookup()
        let resolver = HostResolver(target: SocketAddressText(host: "slow-dns.test", port: 7001)) { target throws(SystemError) in
            try lookup(target)
        }
        let answers = Mutex<[Int]>([])
        for _ in 0..<5 {
            resolver.resolve { answer in
                if case .success(let address?) = answer { answers.withLock { $0.append(Int(address.family)) } }
            }
        }
        #expect(await eventually(within: .seconds(5)) { lookup.calls == 1 })
        try await Task.sleep(for: .milliseconds(50))
        #expect(lookup.calls == 1, "a lookup per attempt")
        lookup.release()
        #expect(await eventually(within: .seconds(5)) { answers.withLock { $0.count } == 5 })
        #expect(answers.withLock { $0 }.allSatisfy { $0 == Int(AF_INET) })

        let later = Mutex(false)
        resolver.resolve { _ in later.withLock { $0 = true } }
        #expect(await eventually(within: .seconds(5)) { later.withLock { $0 } })
        #expect(lookup.calls == 2)
    }
}
