import Foundation
import RPC
import ServiceKit
import Synchronization

// The interop echo service that Tests/Interop/grpc_peer.py serves and calls
// (see Tests/Interop/README.md), plus a few test-only methods.

/// `{text}`: the request and response of `Unary` and `Bidi`, and each request of `ClientStream`.
struct TextMessage: RPCMessage, Equatable {
    var text: String

    init(text: String) { self.text = text }

    // A missing field takes its default (API.md §1); grpcio may omit an empty string.
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        text = try container.decodeIfPresent(String.self, forKey: .text) ?? ""
    }

    static let fields = [FieldDescriptor("text", "String")]
}

/// `{text, count}`: the request of `ServerStream`.
struct StreamRequest: RPCMessage, Equatable {
    var text: String
    var count: Int

    static let fields = [FieldDescriptor("text", "String"), FieldDescriptor("count", "Int")]
}

/// `{text, count}`: the response of `ClientStream`, the texts joined by ",".
struct JoinedTexts: RPCMessage, Equatable {
    var text: String
    var count: Int

    static let fields = [FieldDescriptor("text", "String"), FieldDescriptor("count", "Int")]
}

/// `{millis}`: how long `Sleep` sleeps.
struct SleepRequest: RPCMessage, Equatable {
    var millis: Int

    static let fields = [FieldDescriptor("millis", "Int")]
}

/// `interop.v1.EchoService`, as Tests/Interop/README.md describes it.
enum EchoContract {
    static let service = "interop.v1.EchoService"
    static let unary = MethodDescriptor<TextMessage, TextMessage>(service: service, method: "Unary", kind: .unary)
    static let serverStream = MethodDescriptor<StreamRequest, TextMessage>(
        service: service, method: "ServerStream", kind: .serverStreaming)
    static let clientStream = MethodDescriptor<TextMessage, JoinedTexts>(
        service: service, method: "ClientStream", kind: .clientStreaming)
    static let bidi = MethodDescriptor<TextMessage, TextMessage>(service: service, method: "Bidi", kind: .bidirectionalStreaming)
    static let sleep = MethodDescriptor<SleepRequest, TextMessage>(service: service, method: "Sleep", kind: .unary)

    /// Methods nobody serves, for the UNIMPLEMENTED checks.
    static let unknownMethod = MethodDescriptor<TextMessage, TextMessage>(service: service, method: "Nope", kind: .unary)
    static let unknownService = MethodDescriptor<TextMessage, TextMessage>(
        service: "interop.v1.NoSuchService", method: "Unary", kind: .unary)
}

/// Test-only methods: raw bytes, error details and a bulk download for backpressure.
enum FixtureContract {
    static let service = "storefront.test.v1.FixtureService"
    /// Throws `RPCError.invalidField("email", "is invalid")`.
    static let invalidEmail = MethodDescriptor<TextMessage, TextMessage>(service: service, method: "InvalidEmail", kind: .unary)
    /// Throws FAILED_PRECONDITION with reason `AS_REQUESTED` and the request's text as the message.
    static let failWithMessage = MethodDescriptor<TextMessage, TextMessage>(
        service: service, method: "FailWithMessage", kind: .unary)
    /// Raw bytes, no JSON: echoes every request message as it arrives.
    static let rawEcho = raw("RawEcho", .bidirectionalStreaming)
    /// Raw bytes: after one request message, writes ``downloadCount`` messages of ``downloadChunk`` bytes.
    static let download = raw("Download", .serverStreaming)

    /// Raw bytes, client-streaming: waits until the probe's gate opens, then reads every
    /// request message and answers with the byte count as text.
    static let gatedUpload = raw("GatedUpload", .clientStreaming)
    /// Raw bytes, client-streaming: waits for the probe's gate, then answers without reading
    /// the request messages (the call ends OK while the client may still be sending).
    static let gatedAnswer = raw("GatedAnswer", .clientStreaming)

    /// Waits `millis` without noticing cancellation, then answers: a handler that outlives
    /// its call's connection.
    static let stubbornSleep = MethodDescriptor<SleepRequest, TextMessage>(service: service, method: "StubbornSleep", kind: .unary)

    /// Raw bytes, unary: after one request message, answers one message of ``largeAnswerSize``
    /// bytes — above the outbound mark, so the handler's write waits for the bytes to drain.
    static let largeAnswer = raw("LargeAnswer", .unary)

    /// Raw bytes, server-streaming: after one request message, writes one message, then fails
    /// with ``WriteThenFailError`` (answered INTERNAL; the error is the log line's cause).
    static let writeThenFail = raw("WriteThenFail", .serverStreaming)
    struct WriteThenFailError: Error, CustomStringConvertible {
        var description: String { "the fixture failed on purpose after writing" }
    }

    /// A method of raw bytes (no JSON fields) with no auth, not idempotent.
    private static func raw(_ method: String, _ kind: MethodKind) -> MethodInfo {
        MethodInfo(
            service: service, method: method, kind: kind, auth: .none, idempotent: false, requestFields: [], responseFields: [])
    }

    static let downloadChunk = 64 * 1024
    static let downloadCount = 1024
    static let largeAnswerSize = 1 << 20
}

/// What handlers observed, for tests that must see the server side (cancellation,
/// backpressure). One per test server; thread-safe.
final class Probe: Sendable {
    /// Something a handler reports.
    enum Event: Hashable, Sendable {
        case sleepStarted, sleepCancelled, sleepFinished, downloadFinished, uploadStarted, stubbornStarted, stubbornFinished
    }

    private let state = Mutex<(events: [Event: Int], bytesWritten: Int, gateOpen: Bool)>(([:], 0, false))

    /// Counts one occurrence of `event`.
    func record(_ event: Event) { state.withLock { $0.events[event, default: 0] += 1 } }

    /// How often `event` happened.
    func count(_ event: Event) -> Int { state.withLock { $0.events[event, default: 0] } }

    /// Adds to the bytes the download handler has handed to the transport.
    func addBytesWritten(_ count: Int) { state.withLock { $0.bytesWritten += count } }

    /// Bytes the download handler has handed to the transport so far.
    var bytesWritten: Int { state.withLock { $0.bytesWritten } }

    /// Lets the gated upload handler start reading.
    func openGate() { state.withLock { $0.gateOpen = true } }

    /// Whether ``openGate()`` was called.
    var isGateOpen: Bool { state.withLock { $0.gateOpen } }
}

extension Router {
    /// A router serving the interop echo service and the fixture methods, reporting to
    /// `probe`, with health and Describe added last.
    static func echoRouter(probe: Probe) -> Router {
        var router = Router()
        router.unary(EchoContract.unary) { request, context in
            if request.text.hasPrefix("fail:") {
                let parts = request.text.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
                let name = parts.count > 1 ? String(parts[1]) : ""
                let reason = parts.count > 2 ? String(parts[2]) : ""
                guard let code = RPCCode(name: name) else {
                    throw RPCError(code: .invalidArgument, reason: "MALFORMED_MESSAGE", message: "unknown status code '\(name)'")
                }
                throw RPCError(code: code, reason: reason, message: "requested failure")
            }
            if request.text == "metadata" {
                return TextMessage(text: context.metadata[MetadataKey.requestID] ?? "")
            }
            return request
        }
        router.serverStreaming(EchoContract.serverStream) { request, writer, _ in
            guard request.count >= 0 else {
                throw RPCError(code: .invalidArgument, reason: "MALFORMED_MESSAGE", message: "count must not be negative")
            }
            for index in 0..<request.count {
                try await writer.write(TextMessage(text: "\(request.text)-\(index)"))
            }
        }
        router.clientStreaming(EchoContract.clientStream) { requests, _ in
            var texts: [String] = []
            for try await request in requests { texts.append(request.text) }
            return JoinedTexts(text: texts.joined(separator: ","), count: texts.count)
        }
        router.bidirectional(EchoContract.bidi) { requests, writer, _ in
            for try await request in requests { try await writer.write(request) }
        }
        router.unary(EchoContract.sleep) { request, _ in
            probe.record(.sleepStarted)
            do {
                try await Task.sleep(for: .milliseconds(request.millis))
            } catch {
                probe.record(.sleepCancelled)
                throw error
            }
            probe.record(.sleepFinished)
            return TextMessage(text: "slept")
        }

        router.unary(FixtureContract.invalidEmail) { _, _ in
            throw RPCError.invalidField("email", "is invalid")
        }
        router.unary(FixtureContract.failWithMessage) { request, _ in
            throw RPCError(code: .failedPrecondition, reason: "AS_REQUESTED", message: request.text)
        }
        router.register(FixtureContract.rawEcho) { io, _ in
            while let message = try await io.nextMessage() { try await io.write(message) }
        }
        router.register(FixtureContract.download) { io, _ in
            _ = try await io.nextMessage()
            let chunk = Data(repeating: UInt8(ascii: "d"), count: FixtureContract.downloadChunk)
            for _ in 0..<FixtureContract.downloadCount {
                try await io.write(chunk)
                probe.addBytesWritten(chunk.count)
            }
            probe.record(.downloadFinished)
        }
        router.register(FixtureContract.writeThenFail) { io, _ in
            _ = try await io.nextMessage()
            try await io.write(Data("written".utf8))
            throw FixtureContract.WriteThenFailError()
        }
        router.register(FixtureContract.largeAnswer) { io, _ in
            _ = try await io.nextMessage()
            try await io.write(Data(repeating: UInt8(ascii: "l"), count: FixtureContract.largeAnswerSize))
        }
        router.register(FixtureContract.gatedAnswer) { io, _ in
            while !probe.isGateOpen { try await Task.sleep(for: .milliseconds(10)) }
            try await io.write(Data("answered".utf8))
        }
        router.register(FixtureContract.gatedUpload) { io, _ in
            probe.record(.uploadStarted)
            while !probe.isGateOpen { try await Task.sleep(for: .milliseconds(10)) }
            var total = 0
            while let message = try await io.nextMessage() { total += message.count }
            try await io.write(Data(String(total).utf8))
        }

        router.unary(FixtureContract.stubbornSleep) { request, _ in
            probe.record(.stubbornStarted)
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(request.millis)) { continuation.resume() }
            }
            probe.record(.stubbornFinished)
            return TextMessage(text: "slept")
        }

        router.addStandardServices(health: HealthMonitor())
        return router
    }
}
