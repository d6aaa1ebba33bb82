import Foundation
@testable import gateway
import RPC
import RPCHTTP2
import ServiceTestSupport
import Synchronization
import Testing

/// Streams through the gateway keep flow control end to end: the gateway relays a message
/// only when the other side takes it, so a slow reader holds its writer back across both hops
/// instead of the gateway buffering the difference.
@Suite("Gateway: backpressure through streams", .serialized)
struct ProxyBackpressureLiveTests {
    static let service = "test.bulk.v1.BulkService"
    /// After one request message, writes ``chunkCount`` messages of ``chunkSize`` bytes.
    static let download = ProxyFixture.method(service, "Download", kind: .serverStreaming)
    /// Reads nothing until its gate opens, then every message; answers the byte count as text.
    static let gatedUpload = ProxyFixture.method(service, "GatedUpload", kind: .clientStreaming)
    static let chunkSize = 256 * 1024
    static let chunkCount = 256  // 64 MiB in all
    static let total = chunkSize * chunkCount
    /// What may legitimately be in flight across two hops: each hop's stream window (1 MiB) and
    /// outbound buffer, the messages the gateway and the client hold unread, a few messages in
    /// transit. Without backpressure the whole 64 MiB goes.
    static let bound = 16 * 1024 * 1024

    /// What the upstream's handlers did.
    final class Progress: Sendable {
        private let state = Mutex<(written: Int, uploadStarted: Bool, gateOpen: Bool)>((0, false, false))
        var written: Int { state.withLock { $0.written } }
        var uploadStarted: Bool { state.withLock { $0.uploadStarted } }
        var gateOpen: Bool { state.withLock { $0.gateOpen } }
        func add(_ count: Int) { state.withLock { $0.written += count } }
        func startUpload() { state.withLock { $0.uploadStarted = true } }
        func openGate() { state.withLock { $0.gateOpen = true } }
    }

    /// Runs `body` with a client of a gateway in front of an upstream serving the two methods.
    static func withBulkGateway(_ body: (RPCClient, Progress) async throws -> Void) async throws {
        let progress = Progress()
        var upstreamRouter = Router()
        upstreamRouter.register(download) { io, _ in
            _ = try await io.nextMessage()
            let chunk = Data(repeating: UInt8(ascii: "d"), count: chunkSize)
            for _ in 0..<chunkCount {
                try await io.write(chunk)
                progress.add(chunk.count)
            }
        }
        upstreamRouter.register(gatedUpload) { io, _ in
            progress.startUpload()
            while !progress.gateOpen { try await Task.sleep(for: .milliseconds(10)) }
            var received = 0
            while let message = try await io.nextMessage() { received += message.count }
            try await io.write(Data(String(received).utf8))
        }
        try await ProxyFixture.withProxy(to: upstreamRouter, methods: [download, gatedUpload]) { client, _ in
            try await body(client, progress)
        }
    }

    @Test("a client not reading a server stream holds the upstream's handler back; then everything arrives")
    func slowReaderHoldsUpstreamBack() async throws {
        try await Self.withBulkGateway { client, progress in
            let (received, paused) = try await client.withCall(
                path: Self.download.path, options: CallOptions(timeout: .seconds(60))
            ) { call in
                try await call.send(Data("{}".utf8))
                call.finishSending()
                var received = try await call.nextMessage()?.count ?? 0
                let paused = await PausedWriter.watch(
                    limit: Self.bound, written: { progress.written }, finished: { progress.written == Self.total })
                while let message = try await call.nextMessage() { received += message.count }
                return (received, paused)
            }
            #expect(
                paused.stalled && paused.written < Self.bound,
                "while the client was not reading, the upstream \(paused.description(of: Self.total))")
            #expect(received == Self.total)
        }
    }

    @Test("an upstream handler not reading a client stream holds the client back; then everything arrives")
    func slowUpstreamHoldsClientBack() async throws {
        try await Self.withBulkGateway { client, progress in
            let (answer, paused) = try await client.withCall(
                path: Self.gatedUpload.path, options: CallOptions(timeout: .seconds(60))
            ) { call in
                try await PausedWriter.watchUpload(
                    on: call, chunkSize: Self.chunkSize, count: Self.chunkCount, limit: Self.bound,
                    started: { progress.uploadStarted }, release: { progress.openGate() })
            }
            #expect(
                paused.stalled && paused.written < Self.bound,
                "while the upstream was not reading, the client \(paused.description(of: Self.total))")
            #expect(answer.map { String(decoding: $0, as: UTF8.self) } == String(Self.total))
        }
    }
}
