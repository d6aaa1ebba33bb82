package import Foundation
internal import Synchronization
internal import Testing
package import RPC

/// What a writer did while its reader was not reading: how far it got, and whether it stalled
/// there (flow control held it back) or went on.
package struct PausedWriter: Sendable {
    /// Bytes written by the end of the watch.
    package var written: Int
    /// Whether the writer made no progress for the quiet period.
    package var stalled: Bool
    /// Whether it wrote everything.
    package var finished: Bool

    /// Watches a writer whose reader does not read: it has stalled when it makes no progress
    /// for `quiet`; it has not when it writes past `limit` or finishes (or 15 s pass).
    package static func watch(
        limit: Int, quiet: Duration = .milliseconds(500), written: () -> Int, finished: () -> Bool
    ) async -> PausedWriter {
        var last = written()
        var lastProgress = ContinuousClock.now
        let giveUp = ContinuousClock.now + .seconds(15)
        while ContinuousClock.now < giveUp {
            try? await Task.sleep(for: .milliseconds(50))
            let now = written()
            let done = finished()
            if now > limit || done {
                return PausedWriter(written: now, stalled: false, finished: done)
            }
            if now != last {
                last = now
                lastProgress = .now
            } else if ContinuousClock.now - lastProgress >= quiet {
                return PausedWriter(written: now, stalled: true, finished: false)
            }
        }
        return PausedWriter(written: written(), stalled: false, finished: finished())
    }

    /// "wrote 2048 KiB of 65536 KiB and then stalled", for expectation messages.
    package func description(of total: Int) -> String {
        "wrote \(written / 1024) KiB of \(total / 1024) KiB\(finished ? " (all of it)" : "") and \(stalled ? "then stalled" : "did not stall")"
    }
}

extension PausedWriter {
    /// Uploads `count` messages of `chunkSize` bytes on `call` while the handler receiving them
    /// does not read: waits until `started` says the handler runs, watches how far the upload
    /// gets (up to `limit`), then calls `release` to let the handler read, and returns its
    /// answer (the call's first response message) with what the watch saw.
    package static func watchUpload(
        on call: any ClientCall, chunkSize: Int, count: Int, limit: Int,
        started: @escaping @Sendable () -> Bool, release: () -> Void
    ) async throws -> (answer: Data?, paused: PausedWriter) {
        let sent = SentBytes()
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                let chunk = Data(repeating: UInt8(ascii: "u"), count: chunkSize)
                for _ in 0..<count {
                    try await call.send(chunk)
                    sent.value.add(chunk.count, ordering: .relaxed)
                }
                call.finishSending()
            }
            let began = await eventually(within: .seconds(10), every: .milliseconds(10)) { started() }
            try #require(began, "the receiving handler never started")
            let total = chunkSize * count
            let paused = await watch(
                limit: limit, written: { sent.value.load(ordering: .relaxed) }, finished: { sent.value.load(ordering: .relaxed) == total })
            release()
            try await group.waitForAll()
            return (try await call.nextMessage(), paused)
        }
    }
}

/// The bytes an upload has handed to its call so far.
private final class SentBytes: Sendable {
    let value = Atomic<Int>(0)
}
