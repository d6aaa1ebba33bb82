import Foundation
import RPC
import RPCHTTP2
import Testing

extension LiveTests {
    /// Interop with a third-party gRPC implementation, Python grpcio (Tests/Interop/README.md):
    /// grpcio calls our server, and our client calls a grpcio server.
    @Suite("Interop with grpcio")
    struct InteropLiveTests {
        /// `Tests/Interop/grpc_peer.py`, found from this file's path.
        static let peerScript = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Interop/grpc_peer.py").path

        static let installHint = "pip install grpcio"

        /// Checks that python3 and grpcio are there; records a failure saying how to install them
        /// when they are not. Missing tools fail the test rather than skip it.
        static func requirePeer(sourceLocation: SourceLocation = #_sourceLocation) async throws -> Bool {
            guard FileManager.default.fileExists(atPath: peerScript) else {
                Issue.record("the interop peer is missing at \(peerScript)", sourceLocation: sourceLocation)
                return false
            }
            let probe = try await ChildProcess.run(
                executable: "/usr/bin/env", arguments: ["python3", "-c", "import grpc"], timeout: .seconds(30))
            guard probe.status == 0 else {
                Issue.record(
                    """
                    python3 with grpcio is required for the interop tests; install it with `\(installHint)` \
                    (python3 -c 'import grpc' exited \(probe.status.map(String.init) ?? "late"): \(probe.output))
                    """, sourceLocation: sourceLocation)
                return false
            }
            return true
        }

        @Test("the grpcio client passes every interop check against our server")
        func grpcioClientAgainstOurServer() async throws {
            guard try await Self.requirePeer() else { return }
            try await withLiveServer { live in
                let result = try await ChildProcess.run(
                    executable: "/usr/bin/env",
                    arguments: ["python3", Self.peerScript, "client", "--port", String(live.port)],
                    timeout: .seconds(45))
                let lines = result.output.split(separator: "\n").map(String.init)
                let summary = lines.last { $0.hasPrefix("interop: ") } ?? ""
                #expect(result.status == 0, "grpc_peer.py client exited \(result.status.map(String.init) ?? "late"):\n\(result.output)")
                #expect(
                    summary.hasSuffix(" passed, 0 failed") && lines.last == summary,
                    "the output does not end with 'interop: N passed, 0 failed':\n\(result.output)")
                #expect(!lines.contains { $0.hasPrefix("FAIL") }, "failed checks:\n\(result.output)")
                #expect(lines.filter { $0.hasPrefix("ok ") }.count >= 16, "too few checks ran:\n\(result.output)")
            }
        }

        @Test("our client calls a grpcio server: every kind, an error with its reason, a deadline")
        func ourClientAgainstGrpcioServer() async throws {
            guard try await Self.requirePeer() else { return }
            let peer = try ChildProcess(
                executable: "/usr/bin/env", arguments: ["python3", Self.peerScript, "server", "--port", "0"], keepStdinOpen: true)
            let portLine = await peer.line(startingWith: "PORT ", timeout: .seconds(20))
            guard let portLine, let port = Int(portLine.dropFirst("PORT ".count).trimmingCharacters(in: .whitespaces)) else {
                peer.closeStdin()
                peer.terminate()
                Issue.record("grpc_peer.py server printed no 'PORT n' line:\n\(peer.output)")
                return
            }
            let client = try RPCClient(target: SocketAddressText(host: "127.0.0.1", port: port))
            let outcome = await Result(awaiting: { try await Self.exercise(client) })
            await client.close()
            peer.closeStdin()
            let status = await peer.waitForExit(timeout: .seconds(5))
            if case .failure(let error) = outcome {
                Issue.record("a call to the grpcio server failed: \(error)\npeer output:\n\(peer.output)")
            }
            #expect(status == 0, "grpc_peer.py server did not stop cleanly when its stdin closed:\n\(peer.output)")
        }

        /// The calls our client makes to the grpcio server.
        static func exercise(_ client: RPCClient) async throws {
            let options = CallOptions(timeout: .seconds(10))
            let echoed = try await client.unary(EchoContract.unary, TextMessage(text: "héllo ✓"), options: options)
            #expect(echoed.text == "héllo ✓")

            let requestID = CallOptions(metadata: [MetadataKey.requestID: "from-swift"], timeout: .seconds(10))
            let metadata = try await client.unary(EchoContract.unary, TextMessage(text: "metadata"), options: requestID)
            #expect(metadata.text == "from-swift")

            let streamed = try await client.collect(EchoContract.serverStream, StreamRequest(text: "s", count: 5), options: options)
            #expect(streamed.map(\.text) == ["s-0", "s-1", "s-2", "s-3", "s-4"])
            let none = try await client.collect(EchoContract.serverStream, StreamRequest(text: "s", count: 0), options: options)
            #expect(none.isEmpty)

            let joined = try await client.clientStreaming(EchoContract.clientStream, options: options) { sender in
                for text in ["a", "b", "c"] { try await sender.send(TextMessage(text: text)) }
            }
            #expect(joined == JoinedTexts(text: "a,b,c", count: 3))

            let (acknowledgements, acknowledge) = AsyncStream<Void>.makeStream()
            let bidi = try await client.bidirectional(
                EchoContract.bidi, options: options,
                requests: { sender in
                    var echoed = acknowledgements.makeAsyncIterator()
                    for index in 0..<4 {
                        try await sender.send(TextMessage(text: "b\(index)"))
                        guard await echoed.next() != nil else { return }
                    }
                },
                responses: { responses in
                    var texts: [String] = []
                    for try await response in responses {
                        texts.append(response.text)
                        acknowledge.yield()
                    }
                    acknowledge.finish()
                    return texts
                })
            #expect(bidi == ["b0", "b1", "b2", "b3"])

            let error = await expectRPCError(.notFound, reason: "PRODUCT_NOT_FOUND") {
                try await client.unary(EchoContract.unary, TextMessage(text: "fail:NOT_FOUND:PRODUCT_NOT_FOUND"), options: options)
            }
            #expect(error?.message == "requested failure")

            let (_, elapsed) = await timed {
                await expectRPCError(.deadlineExceeded) {
                    try await client.unary(EchoContract.sleep, SleepRequest(millis: 2000), options: CallOptions(timeout: .milliseconds(300)))
                }
            }
            #expect(elapsed < .milliseconds(1500), "the deadline took \(elapsed)")

            await expectRPCError(.invalidArgument, reason: "MALFORMED_MESSAGE") {
                try await client.withCall(path: EchoContract.unary.path, options: options) { call in
                    try await call.send(Data("not json".utf8))
                    call.finishSending()
                    return try await call.nextMessage()
                }
            }
            await expectRPCError(.unimplemented) {
                try await client.unary(EchoContract.unknownMethod, TextMessage(text: "x"), options: options)
            }
        }
    }
}
