import Foundation
import JSON
import RPC
import Synchronization
import Testing

/// A message of the in-process test service.
private struct Memo: RPCMessage, Equatable {
    var text: String
    static let fields = [FieldDescriptor("text", "String")]
}

/// The test service: one method of each kind, and unary ones that fail, wait or report.
private enum Memos {
    static let service = "test.memos.v1.MemoService"
    static let echo = MethodDescriptor<Memo, Memo>(service: service, method: "Echo", kind: .unary, idempotent: true)
    static let metadata = MethodDescriptor<Memo, Memo>(service: service, method: "Metadata", kind: .unary)
    static let fail = MethodDescriptor<Memo, Memo>(service: service, method: "Fail", kind: .unary)
    static let hang = MethodDescriptor<Memo, Memo>(service: service, method: "Hang", kind: .unary)
    static let flaky = MethodDescriptor<Memo, Memo>(service: service, method: "Flaky", kind: .unary, idempotent: true)
    static let flakyUnsafe = MethodDescriptor<Memo, Memo>(service: service, method: "FlakyUnsafe", kind: .unary)
    static let expand = MethodDescriptor<Memo, Memo>(service: service, method: "Expand", kind: .serverStreaming)
    static let collect = MethodDescriptor<Memo, Memo>(service: service, method: "Collect", kind: .clientStreaming)
    static let chat = MethodDescriptor<Memo, Memo>(service: service, method: "Chat", kind: .bidirectionalStreaming)
    static let hold = MethodDescriptor<Memo, Memo>(service: service, method: "Hold", kind: .clientStreaming)
    static let forever = MethodDescriptor<Memo, Memo>(service: service, method: "Forever", kind: .serverStreaming)
}

/// What the handlers report to the test.
private final class Observed: Sendable {
    let cancelledHandlers = Atomic<Int>(0)
    let flakyFailuresLeft = Atomic<Int>(0)
    let attempts = Atomic<Int>(0)
    /// Opened by the test to let the `Hold` handler read.
    let holdOpen = Atomic<Bool>(false)
}

/// Rejects calls whose metadata carries `x-reject`.
private struct RejectingInterceptor: ServerInterceptor {
    func prepare(_ context: inout ServerContext) async throws {
        if context.metadata["x-reject"] != nil {
            throw RPCError(code: .permissionDenied, reason: "REJECTED", message: "Rejected by the interceptor.")
        }
    }
}

private func makeRouter(_ observed: Observed) -> Router {
    var router = Router()
    router.addInterceptor(RejectingInterceptor())
    router.unary(Memos.echo) { note, _ in note }
    router.unary(Memos.metadata) { _, context in
        Memo(text: "\(context.metadata["x-note"] ?? "-") \(context.requestID) \(context.deadline != nil)")
    }
    router.unary(Memos.fail) { note, _ in
        throw RPCError(
            code: .failedPrecondition, reason: "MEMO_REFUSED", message: String(repeating: "é", count: 2000) + note.text,
            details: .object(["why": .string(note.text)]), cause: CocoaError(.fileNoSuchFile))
    }
    router.unary(Memos.hang) { _, _ in
        do {
            try await Task.sleep(for: .seconds(60))
        } catch {
            observed.cancelledHandlers.add(1, ordering: .relaxed)
            throw error
        }
        return Memo(text: "late")
    }
    for method in [Memos.flaky, Memos.flakyUnsafe] {
        router.unary(method) { note, _ in
            observed.attempts.add(1, ordering: .relaxed)
            if observed.flakyFailuresLeft.subtract(1, ordering: .relaxed).oldValue > 0 {
                throw RPCError(code: .unavailable, message: "Not yet.")
            }
            return note
        }
    }
    router.serverStreaming(Memos.expand) { note, writer, _ in
        for index in 1...3 { try await writer.write(Memo(text: "\(note.text)\(index)")) }
        if note.text == "fail" { throw RPCError(code: .aborted, reason: "STOPPED", message: "Stopped after three.") }
    }
    router.clientStreaming(Memos.collect) { notes, _ in
        var texts: [String] = []
        for try await note in notes { texts.append(note.text) }
        return Memo(text: texts.joined(separator: ","))
    }
    router.bidirectional(Memos.chat) { notes, writer, _ in
        for try await note in notes { try await writer.write(Memo(text: note.text.uppercased())) }
    }
    router.serverStreaming(Memos.forever) { memo, writer, _ in
        try await writer.write(memo)
        do {
            try await Task.sleep(for: .seconds(3600))
        } catch {
            observed.cancelledHandlers.add(1, ordering: .relaxed)
            throw error
        }
    }
    router.clientStreaming(Memos.hold) { notes, _ in
        while !observed.holdOpen.load(ordering: .acquiring) { try await Task.sleep(for: .milliseconds(5)) }
        var count = 0
        for try await _ in notes { count += 1 }
        return Memo(text: "\(count)")
    }
    return router
}

/// A client of `router` over an ``InProcessTransport``, its retries immediate.
private func makeClient(_ observed: Observed) -> RPCClient {
    var retry = RetryPolicy()
    retry.jitter = { 0 }
    return RPCClient(transport: InProcessTransport(router: makeRouter(observed)), retry: retry)
}

@Suite("InProcessTransport: a router called in-process with the wire's semantics")
struct InProcessTransportTests {
    @Test("a unary call reaches its handler and answers; metadata, the request id and the deadline reach the context")
    func unaryWithMetadata() async throws {
        let client = makeClient(Observed())
        #expect(try await client.unary(Memos.echo, Memo(text: "hi")) == Memo(text: "hi"))
        var options = CallOptions(metadata: ["x-note": "n1"], timeout: .seconds(30))
        options.requestID = RequestID("req-42")
        #expect(try await client.unary(Memos.metadata, Memo(text: ""), options: options) == Memo(text: "n1 req-42 true"))
        #expect(try await client.unary(Memos.metadata, Memo(text: "")).text.hasSuffix(" false"))
    }

    @Test("an unknown path is UNIMPLEMENTED with UNKNOWN_METHOD, as the server answers")
    func unknownMethod() async throws {
        let client = makeClient(Observed())
        let unknown = MethodDescriptor<Memo, Memo>(service: Memos.service, method: "Nope", kind: .unary)
        let error = await #expect(throws: RPCError.self) { try await client.unary(unknown, Memo(text: "")) }
        #expect(error?.code == .unimplemented && error?.reason == "UNKNOWN_METHOD")
    }

    @Test("an interceptor's error ends the call before the handler")
    func interceptorRejects() async throws {
        let client = makeClient(Observed())
        let error = await #expect(throws: RPCError.self) {
            try await client.unary(Memos.echo, Memo(text: "x"), options: CallOptions(metadata: ["x-reject": "1"]))
        }
        #expect(error?.code == .permissionDenied && error?.reason == "REJECTED")
    }

    @Test("a handler's error arrives as trailers carry it: code, reason, details, the message cut, no cause")
    func errorAsOnTheWire() async throws {
        let client = makeClient(Observed())
        let error = try #require(await #expect(throws: RPCError.self) { try await client.unary(Memos.fail, Memo(text: "tail")) })
        #expect(error.code == .failedPrecondition && error.reason == "MEMO_REFUSED")
        #expect(error.details == .object(["why": .string("tail")]))
        #expect(error.message.utf8.count <= RPCError.maximumTrailerMessageBytes && error.message.hasSuffix("…"))
        #expect(error.cause == nil)
    }

    @Test("server streaming: the messages, then OK; or the messages, then the error")
    func serverStreaming() async throws {
        let client = makeClient(Observed())
        let texts = try await client.serverStreaming(Memos.expand, Memo(text: "a")) { responses in
            var texts: [String] = []
            for try await note in responses { texts.append(note.text) }
            return texts
        }
        #expect(texts == ["a1", "a2", "a3"])
        let read = Mutex<[String]>([])
        let error = await #expect(throws: RPCError.self) {
            try await client.serverStreaming(Memos.expand, Memo(text: "fail")) { responses in
                for try await note in responses { read.withLock { $0.append(note.text) } }
            }
        }
        #expect(read.withLock { $0 } == ["fail1", "fail2", "fail3"] && error?.reason == "STOPPED")
    }

    @Test("client streaming and bidirectional calls carry every message both ways")
    func streamingBothWays() async throws {
        let client = makeClient(Observed())
        let collected = try await client.clientStreaming(Memos.collect) { sender in
            for text in ["x", "y", "z"] { try await sender.send(Memo(text: text)) }
        }
        #expect(collected == Memo(text: "x,y,z"))
        let chat = try await client.bidirectional(Memos.chat, requests: { sender in
            for index in 0..<20 { try await sender.send(Memo(text: "m\(index)")) }
        }, responses: { responses in
            var texts: [String] = []
            for try await note in responses { texts.append(note.text) }
            return texts
        })
        #expect(chat == (0..<20).map { "M\($0)" })
    }

    @Test("a sender suspends while its messages wait unread, and goes on once they are read")
    func backpressure() async throws {
        let observed = Observed()
        let client = makeClient(observed)
        let sent = Atomic<Int>(0)
        let total = InProcessCallCapacity.value * 3
        async let answer = client.clientStreaming(Memos.hold) { sender in
            for _ in 0..<total {
                try await sender.send(Memo(text: "."))
                sent.add(1, ordering: .relaxed)
            }
        }
        // Sends go through until the pipe is full, then stop there while nothing is read.
        let deadline = ContinuousClock.now + .seconds(10)
        while sent.load(ordering: .relaxed) < InProcessCallCapacity.value, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(2))
        }
        try await Task.sleep(for: .milliseconds(50))
        #expect(sent.load(ordering: .relaxed) == InProcessCallCapacity.value)
        observed.holdOpen.store(true, ordering: .releasing)
        #expect(try await answer == Memo(text: "\(total)"))
    }

    @Test("the deadline ends the call with DEADLINE_EXCEEDED and cancels the handler")
    func deadline() async throws {
        let observed = Observed()
        let client = makeClient(observed)
        let error = await #expect(throws: RPCError.self) {
            try await client.unary(Memos.hang, Memo(text: ""), options: CallOptions(timeout: .milliseconds(100)))
        }
        #expect(error?.code == .deadlineExceeded)
        try await eventuallyTrue { observed.cancelledHandlers.load(ordering: .relaxed) == 1 }
    }

    @Test("cancelling the calling task cancels the call and its handler")
    func cancellation() async throws {
        let observed = Observed()
        let client = makeClient(observed)
        let task = Task { try await client.unary(Memos.hang, Memo(text: "")) }
        try await Task.sleep(for: .milliseconds(50))
        task.cancel()
        let error = await #expect(throws: RPCError.self) { try await task.value }
        #expect(error?.code == .cancelled)
        try await eventuallyTrue { observed.cancelledHandlers.load(ordering: .relaxed) == 1 }
    }

    @Test("one retry decision for both call paths: idempotent UNAVAILABLE is retried, a non-idempotent one is not")
    func retries() async throws {
        let observed = Observed()
        let client = makeClient(observed)
        observed.flakyFailuresLeft.store(2, ordering: .relaxed)
        #expect(try await client.unary(Memos.flaky, Memo(text: "ok")) == Memo(text: "ok"))
        #expect(observed.attempts.load(ordering: .relaxed) == 3)

        observed.attempts.store(0, ordering: .relaxed)
        observed.flakyFailuresLeft.store(2, ordering: .relaxed)
        let answer = try await withCheckedThrowingContinuation { continuation in
            client.startUnary(Memos.flaky.info, request: Data(#"{"text":"cb"}"#.utf8), options: CallOptions()) { result, _ in
                continuation.resume(with: result)
            }
        }
        #expect(String(decoding: answer, as: UTF8.self) == #"{"text":"cb"}"# && observed.attempts.load(ordering: .relaxed) == 3)

        observed.attempts.store(0, ordering: .relaxed)
        observed.flakyFailuresLeft.store(1, ordering: .relaxed)
        let error = await #expect(throws: RPCError.self) { try await client.unary(Memos.flakyUnsafe, Memo(text: "no")) }
        #expect(error?.code == .unavailable && observed.attempts.load(ordering: .relaxed) == 1)
    }

    @Test("closing the client ends a stream still open with UNAVAILABLE and cancels its handler")
    func closeEndsOpenCalls() async throws {
        let observed = Observed()
        let client = makeClient(observed)
        let first = AsyncStream<Void>.makeStream()
        let watch = Task {
            try await client.serverStreaming(Memos.forever, Memo(text: "open")) { responses in
                defer { first.continuation.finish() }
                for try await _ in responses { first.continuation.yield() }
            }
        }
        var firstArrived = first.stream.makeAsyncIterator()
        _ = await firstArrived.next()  // the watch task yields once per message, or ends the stream on failure
        await client.close()
        let error = await #expect(throws: RPCError.self) { try await watch.value }
        #expect(error?.code == .unavailable)
        try await eventuallyTrue { observed.cancelledHandlers.load(ordering: .relaxed) == 1 }
    }

    @Test("a closed transport refuses calls with UNAVAILABLE")
    func closed() async throws {
        let client = makeClient(Observed())
        await client.close()
        let error = await #expect(throws: RPCError.self) { try await client.unary(Memos.echo, Memo(text: "")) }
        #expect(error?.code == .unavailable && client.isClosed)
    }
}

/// The pipe capacity the backpressure test relies on.
private enum InProcessCallCapacity {
    static let value = 8
}

/// Waits (at most 10 s) until `condition` holds.
private func eventuallyTrue(_ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(10)
    while !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("the condition did not come true within 10 s")
            return
        }
        try await Task.sleep(for: .milliseconds(5))
    }
}

@Suite("RetryPolicy.retryDelay: the one retry decision")
struct RetryDecisionTests {
    private let idempotent = Memos.flaky.info
    private let unsafe = Memos.flakyUnsafe.info
    private let unavailable = RPCError(code: .unavailable, message: "down")
    private var policy: RetryPolicy {
        var policy = RetryPolicy()
        policy.jitter = { 1 }
        return policy
    }

    @Test("UNAVAILABLE before headers on an idempotent method is retried after the backoff, until attempts run out")
    func retriedUntilAttemptsRunOut() {
        #expect(policy.retryDelay(after: 1, of: idempotent, failedWith: unavailable, sawResponseHeaders: false, deadline: nil) == .milliseconds(100))
        #expect(policy.retryDelay(after: 2, of: idempotent, failedWith: unavailable, sawResponseHeaders: false, deadline: nil) == .milliseconds(200))
        #expect(policy.retryDelay(after: 5, of: idempotent, failedWith: unavailable, sawResponseHeaders: false, deadline: nil) == nil)
    }

    @Test("not retried: other codes, after response headers, non-idempotent methods, past the deadline")
    func notRetried() {
        let aborted = RPCError(code: .aborted, message: "no")
        #expect(policy.retryDelay(after: 1, of: idempotent, failedWith: aborted, sawResponseHeaders: false, deadline: nil) == nil)
        #expect(policy.retryDelay(after: 1, of: idempotent, failedWith: unavailable, sawResponseHeaders: true, deadline: nil) == nil)
        #expect(policy.retryDelay(after: 1, of: unsafe, failedWith: unavailable, sawResponseHeaders: false, deadline: nil) == nil)
        #expect(policy.retryDelay(after: 1, of: idempotent, failedWith: unavailable, sawResponseHeaders: false, deadline: .now + .milliseconds(50)) == nil)
    }

    @Test("a refused stream never reached the server: retried even for a non-idempotent method")
    func refusedStream() {
        let refused = RPCError(code: .unavailable, reason: "REFUSED_STREAM", message: "refused")
        #expect(policy.retryDelay(after: 1, of: unsafe, failedWith: refused, sawResponseHeaders: false, deadline: nil) != nil)
    }
}
