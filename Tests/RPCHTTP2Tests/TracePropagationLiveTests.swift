import Foundation
import Logging
import RPC
import RPCHTTP2
import Synchronization
import Telemetry
import Testing

/// Spans a test keeps, as an exporter would receive them.
final class CollectedSpans: SpanRecorder {
    private let spans = Mutex<[SpanRecord]>([])

    func record(_ span: SpanRecord) { spans.withLock { $0.append(span) } }

    /// Every span recorded so far.
    var all: [SpanRecord] { spans.withLock { $0 } }
}

extension LiveTests {
    /// W3C trace context over the wire: a front server whose handler calls a back server
    /// while serving; the spans of one call form one tree across both, and each call line
    /// names its trace and span.
    @Suite("Trace context across hops")
    struct TracePropagationLiveTests {
        static let callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
        static let callerSpan = "00f067aa0ba902b7"

        @Test("client → front (server span, client span) → back (server span): one trace, each span the child of the one before")
        func spansFormOneTree() async throws {
            let spans = CollectedSpans()
            let lines = CapturedLogLines()
            var serverConfiguration = ServerConfiguration(host: "127.0.0.1", port: 0)
            serverConfiguration.spans = spans
            let back = try HTTP2Server(configuration: serverConfiguration, router: .echoRouter(probe: Probe()), logger: lines.logger)
            let backPort = try back.start()
            var clientConfiguration = ClientConfiguration()
            clientConfiguration.spans = spans
            clientConfiguration.metrics = RPCCallMetrics(side: .client, paths: [EchoContract.unary.path], registry: MetricsRegistry())
            let backClient = try RPCClient(target: SocketAddressText(host: "127.0.0.1", port: backPort), configuration: clientConfiguration)
            var front = Router()
            front.unary(EchoContract.unary) { request, context in
                try await backClient.unary(EchoContract.unary, request, options: .propagating(from: context))
            }
            let frontServer = try HTTP2Server(configuration: serverConfiguration, router: front, logger: lines.logger)
            let frontPort = try frontServer.start()
            let client = try RPCClient(target: SocketAddressText(host: "127.0.0.1", port: frontPort))
            var metadata = Metadata()
            metadata.set(MetadataKey.traceparent, "00-\(Self.callerTrace)-\(Self.callerSpan)-01")
            metadata.set(MetadataKey.tracestate, "vendor=7")
            let answer = try await client.unary(EchoContract.unary, TextMessage(text: "hop"), options: CallOptions(metadata: metadata))
            #expect(answer.text == "hop")
            await client.close()
            await backClient.close()
            await frontServer.shutdown()
            await back.shutdown()

            let recorded = spans.all
            let frontServerSpan = try #require(recorded.first { $0.kind == .server && $0.trace.parentSpanIDText == Self.callerSpan })
            let clientSpan = try #require(recorded.first { $0.kind == .client })
            let backServerSpan = try #require(recorded.first { $0.kind == .server && $0.trace.parentSpanID == clientSpan.trace.spanID })
            #expect(recorded.count == 3, "\(recorded.map { ($0.kind, $0.trace.spanIDText, $0.trace.parentSpanIDText ?? "-") })")
            for span in recorded {
                #expect(span.trace.traceIDText == Self.callerTrace)
                #expect(span.trace.traceState == "vendor=7")
                #expect(span.path == EchoContract.unary.path && span.code == nil)
                #expect(span.endNanoseconds >= span.startNanoseconds)
            }
            #expect(clientSpan.trace.parentSpanID == frontServerSpan.trace.spanID)
            #expect(backServerSpan.startNanoseconds >= clientSpan.startNanoseconds)

            // Each server's call line names the trace and its own span.
            let calls = lines.calls.filter { $0.fields["method"] == EchoContract.unary.path }
            #expect(Set(calls.compactMap { $0.fields["trace-id"] }) == [Self.callerTrace])
            #expect(Set(calls.compactMap { $0.fields["span-id"] }) == [frontServerSpan.trace.spanIDText, backServerSpan.trace.spanIDText])
        }

        @Test("a call without a traceparent starts a trace; a malformed one is ignored the same way")
        func startsTrace() async throws {
            let lines = CapturedLogLines()
            try await withLiveServer(logger: lines.logger) { live in
                var malformed = Metadata()
                malformed.set(MetadataKey.traceparent, "00-XYZ")
                _ = try await live.client.unary(EchoContract.unary, TextMessage(text: "a"))
                _ = try await live.client.unary(EchoContract.unary, TextMessage(text: "b"), options: CallOptions(metadata: malformed))
            }
            let traces = lines.calls.filter { $0.fields["method"] == EchoContract.unary.path }.compactMap { $0.fields["trace-id"] }
            #expect(traces.count == 2)
            #expect(Set(traces).count == 2)
            #expect(traces.allSatisfy { $0.count == 32 && $0 != String(repeating: "0", count: 32) })
        }
    }
}
