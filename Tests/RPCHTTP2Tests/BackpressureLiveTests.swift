import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

extension LiveTests {
    /// Flow control: a slow reader holds its writer back instead of buffering without bound,
    /// and the window held back for a stream comes back when the stream ends.
    @Suite("Backpressure")
    struct BackpressureLiveTests {
        @Test("a server-streaming handler writing 64 MiB is held back while the client does not read")
        func slowReaderBlocksWriter() async throws {
            try await withLiveServer { live in
                let total = FixtureContract.downloadChunk * FixtureContract.downloadCount
                let probe = live.probe
                let (received, paused) = try await live.client.withCall(
                    path: FixtureContract.download.path, options: CallOptions(timeout: .seconds(40))
                ) { call in
                    try await call.send(Data("{}".utf8))
                    call.finishSending()
                    var received = try await call.nextMessage()?.count ?? 0
                    // Stop reading, and watch the handler until it stalls or clearly does not.
                    let paused = await Self.watchWriter(probe, limit: 8 * mebibyte)
                    while let message = try await call.nextMessage() { received += message.count }
                    return (received, paused)
                }
                // What may legitimately be in flight: the handler's outbound buffer (256 KiB), the
                // stream window (1 MiB), the client's unread messages (256 KiB) and a few messages.
                // 8 MiB is a generous bound; without backpressure the handler writes all 64 MiB.
                #expect(
                    paused.stalled && paused.written < 8 * mebibyte,
                    "while the client was not reading, the handler \(paused.description(of: total))")
                #expect(received == total)
                #expect(probe.bytesWritten == total)
            }
        }

        /// Watches the download handler while the client does not read.
        static func watchWriter(_ probe: Probe, limit: Int) async -> PausedWriter {
            await PausedWriter.watch(limit: limit, written: { probe.bytesWritten }, finished: { probe.count(.downloadFinished) > 0 })
        }

        @Test("a client-streaming upload of 64 MiB is held back while the handler does not read")
        func slowHandlerBlocksUploader() async throws {
            try await withLiveServer { live in
                let total = FixtureContract.downloadChunk * FixtureContract.downloadCount
                let probe = live.probe
                let (answer, paused) = try await live.client.withCall(
                    path: FixtureContract.gatedUpload.path, options: CallOptions(timeout: .seconds(40))
                ) { call in
                    // The handler does not read until the gate opens.
                    try await PausedWriter.watchUpload(
                        on: call, chunkSize: FixtureContract.downloadChunk, count: FixtureContract.downloadCount,
                        limit: 8 * mebibyte, started: { probe.count(.uploadStarted) == 1 }, release: { probe.openGate() })
                }
                #expect(
                    paused.stalled && paused.written < 8 * mebibyte,
                    "while the handler was not reading, the client \(paused.description(of: total))")
                #expect(answer.map { String(decoding: $0, as: UTF8.self) } == String(total))
            }
        }

        @Test("an upload held back by backpressure goes on when the server answers OK without reading it")
        func blockedUploaderReleasedByAnswer() async throws {
            try await withLiveServer { live in
                let probe = live.probe
                let call = try live.client.makeCall(path: FixtureContract.gatedAnswer.path, options: CallOptions(timeout: .seconds(20)))
                let sent = Counter()
                let finished = Counter()
                let sender = Task {
                    let chunk = Data(repeating: UInt8(ascii: "u"), count: FixtureContract.downloadChunk)
                    for _ in 0..<256 {  // 16 MiB: far past the stream's window and the send buffer
                        guard (try? await call.send(chunk)) != nil else { break }
                        sent.add(chunk.count)
                    }
                    finished.add(1)
                }
                let paused = await PausedWriter.watch(
                    limit: 16 * mebibyte - 1, quiet: .milliseconds(150), written: { sent.value }, finished: { finished.value > 0 })
                probe.openGate()
                let answer = try await call.nextMessage()
                let released = await eventually(within: .seconds(5)) { finished.value == 1 }
                sender.cancel()
                #expect(paused.stalled, "the upload \(paused.description(of: 16 * mebibyte))")
                #expect(answer.map { String(decoding: $0, as: UTF8.self) } == "answered")
                #expect(released, "send() still waits after the call ended OK")
            }
        }

        @Test("uploads cancelled while their handlers are not reading give their window back to the connection")
        func cancelledUploadsReturnWindow() async throws {
            try await withLiveServer { live in
                // The gate stays closed: no upload handler ever reads. Each call pushes until it
                // stalls (at most 2 MiB), then is cancelled. 20 calls hold back more than the
                // 16 MiB connection window if withheld bytes of closed streams are never given back.
                for round in 0..<20 {
                    let sent = Counter()
                    try await live.client.withCall(path: FixtureContract.gatedUpload.path, options: CallOptions(timeout: .seconds(5))) { call in
                        await withTaskGroup(of: Void.self) { group in
                            group.addTask {
                                let chunk = Data(repeating: UInt8(ascii: "u"), count: FixtureContract.downloadChunk)
                                for _ in 0..<32 {
                                    guard (try? await call.send(chunk)) != nil else { return }
                                    sent.add(chunk.count)
                                }
                            }
                            _ = await PausedWriter.watch(
                                limit: 2 * mebibyte - 1, quiet: .milliseconds(150), written: { sent.value }, finished: { false })
                            call.cancel()
                        }
                    }
                    #expect(sent.value > 0, "round \(round) sent nothing")
                }
                let text = String(repeating: "w", count: mebibyte)
                let echoed = try await live.client.unary(
                    EchoContract.unary, TextMessage(text: text), options: CallOptions(timeout: .seconds(5)))
                #expect(echoed.text.count == text.count)
            }
        }

        @Test("downloads the client stopped reading, over the connection window in all, do not hold up its other calls")
        func stalledDownloadsLeaveConnectionFree() async throws {
            try await withLiveServer { live in
                // Each download's reader stops after one message: its stream holds back up to
                // 1.25 MiB (the stream window and the reader's unread messages), 20 of them more
                // than the 16 MiB connection window. Were that window held back with them (a
                // gateway relaying watches to clients that stopped reading), every other call
                // on the connection would stall.
                let calls = try (0..<20).map { _ in
                    try live.client.makeCall(path: FixtureContract.download.path, options: CallOptions(timeout: .seconds(30)))
                }
                for call in calls {
                    try await call.send(Data("{}".utf8))
                    call.finishSending()
                    _ = try await call.nextMessage()
                }
                let probe = live.probe
                let paused = await PausedWriter.watch(limit: 60 * mebibyte, written: { probe.bytesWritten }, finished: { false })
                #expect(paused.stalled && paused.written > 16 * mebibyte, "the downloads \(paused.description(of: 20 * 64 * mebibyte))")
                let text = String(repeating: "w", count: 64 * 1024)
                let echoed = try await live.client.unary(
                    EchoContract.unary, TextMessage(text: text), options: CallOptions(timeout: .seconds(5)))
                #expect(echoed.text.count == text.count)
                for call in calls { call.cancel() }
            }
        }

        @Test("uploads whose handlers do not read, over the connection window in all, do not hold up other calls")
        func stalledUploadsLeaveConnectionFree() async throws {
            try await withLiveServer { live in
                // The gate stays closed: no upload handler reads. Each upload pushes until its
                // stream's window is used (about 1.25 MiB with the handler's inbox), 20 of them
                // more than the server's 16 MiB connection window.
                let sent = Counter()
                let calls = try (0..<20).map { _ in
                    try live.client.makeCall(path: FixtureContract.gatedUpload.path, options: CallOptions(timeout: .seconds(30)))
                }
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for call in calls {
                        group.addTask {
                            let chunk = Data(repeating: UInt8(ascii: "u"), count: FixtureContract.downloadChunk)
                            for _ in 0..<64 {
                                guard (try? await call.send(chunk)) != nil else { return }
                                sent.add(chunk.count)
                            }
                        }
                    }
                    let paused = await PausedWriter.watch(limit: 60 * mebibyte, written: { sent.value }, finished: { false })
                    #expect(paused.stalled && paused.written > 16 * mebibyte, "the uploads \(paused.description(of: 20 * 4 * mebibyte))")
                    let text = String(repeating: "w", count: mebibyte)
                    let echoed = try await live.client.unary(
                        EchoContract.unary, TextMessage(text: text), options: CallOptions(timeout: .seconds(5)))
                    #expect(echoed.text.count == text.count)
                    for call in calls { call.cancel() }
                    try await group.waitForAll()
                }
            }
        }

        @Test("downloads cancelled while the client is not reading give their window back to the connection")
        func cancelledDownloadsReturnWindow() async throws {
            try await withLiveServer { live in
                // Each download is cancelled after one message; the handler has written more by
                // then. 20 of them exceed the 16 MiB connection window if the client never gives
                // back the window of the bytes it dropped.
                for _ in 0..<20 {
                    try await live.client.withCall(path: FixtureContract.download.path, options: CallOptions(timeout: .seconds(5))) { call in
                        try await call.send(Data("{}".utf8))
                        call.finishSending()
                        _ = try await call.nextMessage()
                        try await Task.sleep(for: .milliseconds(20))
                        call.cancel()
                    }
                }
                let text = String(repeating: "w", count: mebibyte)
                let echoed = try await live.client.unary(
                    EchoContract.unary, TextMessage(text: text), options: CallOptions(timeout: .seconds(5)))
                #expect(echoed.text.count == text.count)
            }
        }
    }
}
