@testable import RPCHTTP2
import Foundation
import RPC
import Testing

@Suite("Transport units")
struct TransportUnitTests {
    @Test("the timer heap pops due timers earliest first and leaves future ones")
    func timerHeapOrder() {
        var heap = TimerHeap()
        for (deadline, id) in [(50, 5), (10, 1), (30, 3), (20, 2), (40, 4), (90, 9)] as [(UInt64, UInt64)] {
            heap.push(deadline: deadline, id: id)
        }
        var popped: [UInt64] = []
        while let id = heap.popExpired(now: 45) { popped.append(id) }
        #expect(popped == [1, 2, 3, 4])
        #expect(heap.millisecondsUntilNext(now: 45) == 1)  // 5 ns away rounds up to 1 ms
        #expect(heap.popExpired(now: 100) == 5)
        #expect(heap.popExpired(now: 100) == 9)
        #expect(heap.isEmpty)
        #expect(heap.millisecondsUntilNext(now: 0) == -1)
    }

    @Test("retaining timers drops the others and keeps the heap in deadline order")
    func timerHeapRetain() {
        var heap = TimerHeap()
        for id in UInt64(1)...20 { heap.push(deadline: (id * 7919) % 101, id: id) }
        heap.retain { $0 % 2 == 0 }
        #expect(heap.count == 10)
        var popped: [UInt64] = []
        while let id = heap.popExpired(now: .max) { popped.append(id) }
        #expect(popped.allSatisfy { $0 % 2 == 0 } && popped.count == 10)
        #expect(popped.map { ($0 * 7919) % 101 } == popped.map { ($0 * 7919) % 101 }.sorted())
    }

    @Test("cancelled timers do not pile up in a loop's heap; live ones still fire")
    func cancelledTimersAreDropped() async throws {
        let loop = try EventLoop(name: "timer-test")
        // Resumed by the live timer firing, with the heap's size after the cancellations.
        let heapCount = await withCheckedContinuation { (continuation: CheckedContinuation<Int, Never>) in
            loop.execute {
                for _ in 0..<10_000 {
                    let id = loop.scheduleTimer(after: .seconds(30)) {}
                    loop.cancelTimer(id)
                }
                let count = loop.timerHeapCount
                loop.scheduleTimer(after: .milliseconds(5)) { continuation.resume(returning: count) }
            }
        }
        await loop.shutdown()
        #expect(heapCount <= 130, "10,000 cancelled timers left \(heapCount) heap entries")
    }

    @Test("timeouts until the next timer are capped at a minute")
    func timerHeapCap() {
        var heap = TimerHeap()
        heap.push(deadline: 10 * 60 * 1_000_000_000, id: 1)
        #expect(heap.millisecondsUntilNext(now: 0) == 60_000)
    }

    @Test("a server's reset is read as the call's status: a CANCEL after the call's own deadline is that deadline")
    func resetStatuses() {
        #expect(ClientConnection.error(forReset: 8).code == .cancelled)
        #expect(ClientConnection.error(forReset: 8, deadlinePassed: true).code == .deadlineExceeded)
        // Only CANCEL: a refused stream stays retryable, whatever the time.
        #expect(ClientConnection.error(forReset: 7, deadlinePassed: true).reason == "REFUSED_STREAM")
        #expect(ClientConnection.error(forReset: 2, deadlinePassed: true).code == .internal)
    }

    @Test("host:port text parses names, IPv4 and bracketed IPv6", arguments: [
        ("127.0.0.1:7001", "127.0.0.1", 7001),
        ("localhost:80", "localhost", 80),
        ("[::1]:8080", "::1", 8080),
        ("auth-svc.default.svc:7001", "auth-svc.default.svc", 7001),
    ])
    func addressParsing(text: String, host: String, port: Int) throws {
        let address = try #require(SocketAddressText(text))
        #expect(address.host == host)
        #expect(address.port == port)
        #expect(SocketAddressText(address.description) == address)
    }

    @Test("malformed host:port text is rejected", arguments: ["", "7001", ":7001", "host:", "host:99999", "host:x", "[]:1"])
    func addressRejects(text: String) {
        #expect(SocketAddressText(text) == nil)
    }

    @Test("header names are recognized from bytes; a status is read as a decimal or 0")
    func knownHeaders() {
        func bytes<T>(_ text: String, _ body: (UnsafeRawBufferPointer) -> T) -> T {
            Array(text.utf8).withUnsafeBytes(body)
        }
        #expect(bytes(":status") { KnownHeader.isStatus($0) })
        #expect(!bytes(":statux") { KnownHeader.isStatus($0) })
        #expect(!bytes("status") { KnownHeader.isStatus($0) })
        #expect(bytes(":path") { KnownHeader($0) } == .path)
        #expect(bytes("grpc-timeout") { KnownHeader($0) } == .timeout)
        #expect(bytes("x-request-id") { KnownHeader($0) } == .other)
        for (text, value) in [("200", 200), ("415", 415), ("0", 0), ("", 0), ("2x0", 0), ("+200", 0), ("1234567890", 0)] {
            #expect(bytes(text) { KnownHeader.decimal($0) } == value, "\(text)")
        }
    }

    @Test("stream buffers hand a waiting reader the first message and keep the rest in order")
    func streamBuffersOrder() {
        var buffers = StreamBuffers()
        _ = buffers.deliver(.init([1]))
        _ = buffers.deliver(.init([2, 2]))
        _ = buffers.deliver(.init([3, 3, 3]))
        #expect(buffers.queuedMessages == 3)
        #expect(buffers.inboxBytes == 6)
        guard case .message(let first, _) = buffers.take(nil), case .message(let second, _) = buffers.take(nil) else {
            Issue.record("expected two messages")
            return
        }
        #expect(Array(first) == [1])
        #expect(Array(second) == [2, 2])
        _ = buffers.deliver(.init([4]))  // arrives behind the one still queued
        #expect(buffers.queuedMessages == 2)
        for expected: [UInt8] in [[3, 3, 3], [4]] {
            guard case .message(let message, _) = buffers.take(nil) else {
                Issue.record("expected \(expected)")
                return
            }
            #expect(Array(message) == expected)
        }
        #expect(buffers.queuedMessages == 0)
        #expect(buffers.inboxBytes == 0)
        guard case .wait = buffers.take(nil) else {
            Issue.record("expected to wait")
            return
        }
        _ = buffers.endInbound(.success(()))
        guard case .end = buffers.take(nil) else {
            Issue.record("expected the end")
            return
        }
    }

    @Test("stream buffers withhold window above the high-water mark and regrant below it")
    func streamBuffersWindow() {
        var buffers = StreamBuffers()
        let big = [UInt8](repeating: 7, count: StreamBuffers.inboundHighWater)
        _ = buffers.deliver(.init(big))
        #expect(!buffers.belowInboundMark)
        guard case .message(_, let regrant) = buffers.take(nil) else {
            Issue.record("expected a message")
            return
        }
        #expect(regrant)
        #expect(buffers.belowInboundMark)
    }

    @Test("stream buffers drain framed bytes across several reads")
    func streamBuffersDrain() {
        var buffers = StreamBuffers()
        let (schedule, wait) = buffers.enqueue(.init([1, 2, 3]))
        #expect(schedule && !wait)
        #expect(buffers.unsent == 8)
        var out = [UInt8](repeating: 0, count: 5)
        let first = out.withUnsafeMutableBytes { buffers.drain(into: $0).count }
        #expect(first == 5)
        #expect(out == [0, 0, 0, 0, 3])
        let rest = out.withUnsafeMutableBytes { buffers.drain(into: $0).count }
        #expect(rest == 3)
        #expect(Array(out.prefix(3)) == [1, 2, 3])
        #expect(buffers.unsent == 0)
    }

    @Test("queued messages, empty and sliced ones included, drain as the same frames whatever the read sizes", arguments: [1, 2, 3, 5, 7, 64, 4096])
    func streamBuffersDrainManyMessages(readSize: Int) {
        let big = Data((0..<300).map { UInt8(truncatingIfNeeded: $0) })
        let messages = [Data([9]), Data(), big, big[big.startIndex + 10..<big.startIndex + 20], Data([1, 2, 3, 4, 5, 6])]
        var expected: [UInt8] = []
        for message in messages { MessageFraming.append(message, to: &expected) }
        var buffers = StreamBuffers()
        for message in messages { _ = buffers.enqueue(message) }
        #expect(buffers.unsent == expected.count)
        var drained: [UInt8] = []
        var out = [UInt8](repeating: 0, count: readSize)
        while buffers.unsent > 0 {
            let count = out.withUnsafeMutableBytes { buffers.drain(into: $0).count }
            #expect(count == min(readSize, expected.count - drained.count))
            drained += out.prefix(count)
        }
        #expect(drained == expected)
        // Drained to empty, the buffers take and send new messages as before.
        _ = buffers.enqueue(Data([7]))
        let count = out.withUnsafeMutableBytes { buffers.drain(into: $0).count }
        #expect(count == min(readSize, 6))
    }

    @Test("a message queued while another is half sent follows it")
    func streamBuffersQueueBehindPartialMessage() {
        var buffers = StreamBuffers()
        _ = buffers.enqueue(Data([1, 2, 3, 4]))
        var out = [UInt8](repeating: 0, count: 7)
        #expect(out.withUnsafeMutableBytes { buffers.drain(into: $0).count } == 7)
        #expect(out == [0, 0, 0, 0, 4, 1, 2])
        let (schedule, _) = buffers.enqueue(Data([5]))
        #expect(schedule == false)  // the flush asked for by the first message is still due
        #expect(buffers.unsent == 2 + 6)
        var rest = [UInt8](repeating: 0, count: 100)
        #expect(rest.withUnsafeMutableBytes { buffers.drain(into: $0).count } == 8)
        #expect(Array(rest.prefix(8)) == [3, 4, 0, 0, 0, 0, 1, 5])
    }
}

@Suite("Retry policy")
struct RetryPolicyTests {
    @Test("a delay is its share of the backoff, which grows by the multiplier up to the cap")
    func delays() {
        var policy = RetryPolicy()
        policy.jitter = { 1 }
        #expect((1...6).map { policy.delay(beforeRetry: $0) } == [
            .milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800), .seconds(1), .seconds(1),
        ])
        policy.jitter = { 0.5 }
        #expect(policy.delay(beforeRetry: 2) == .milliseconds(100))
        policy.jitter = { 0 }
        #expect(policy.delay(beforeRetry: 3) == .zero)
    }

    @Test("a retry far past the cap gets the cap: the growth stops there rather than overflowing")
    func farRetries() {
        var policy = RetryPolicy()
        policy.jitter = { 1 }
        policy.maxAttempts = 5
        for retry in [7, 150, 10_000, Int.max] { #expect(policy.delay(beforeRetry: retry) == .seconds(1)) }
    }

    @Test("the reconnect backoff grows by the multiplier up to its cap, for any number of failures")
    func reconnectBackoff() {
        var configuration = ClientConfiguration()  // 0.1 s, x1.6, 5 s
        let expected: [Duration] = [.milliseconds(100), .milliseconds(160), .milliseconds(256), .microseconds(409_600)]
        for (failures, delay) in zip(1..., expected) {
            let error = configuration.reconnectBackoff(afterFailures: failures) - delay
            #expect(error < .nanoseconds(1) && error > .nanoseconds(-1))
        }
        #expect(configuration.reconnectBackoff(afterFailures: 9) < .seconds(5))  // 0.1 s x 1.6^8 = 4.29 s
        #expect(configuration.reconnectBackoff(afterFailures: 10) == .seconds(5))
        // 0.1 s x 1.6^104 does not fit a Duration: an upstream down this long crashed its callers.
        for failures in [104, 105, 1_000, 1_000_000, Int.max] {
            #expect(configuration.reconnectBackoff(afterFailures: failures) == .seconds(5))
        }
        configuration.reconnectMultiplier = 1  // no growth
        #expect(configuration.reconnectBackoff(afterFailures: 1_000) == .milliseconds(100))
        configuration.reconnectInitialBackoff = .seconds(9)  // above the cap
        #expect(configuration.reconnectBackoff(afterFailures: 1) == .seconds(5))
        configuration.reconnectInitialBackoff = .zero
        configuration.reconnectMultiplier = 1.6
        #expect(configuration.reconnectBackoff(afterFailures: 1_000) == .zero)
    }

    @Test("by default each delay is drawn anew, within 0 and the backoff")
    func jittered() {
        let policy = RetryPolicy()
        let delays = (0..<200).map { _ in policy.delay(beforeRetry: 1) }
        #expect(delays.allSatisfy { $0 >= .zero && $0 <= .milliseconds(100) })
        #expect(Set(delays.map { $0.components.attoseconds }).count > 1)
    }
}
