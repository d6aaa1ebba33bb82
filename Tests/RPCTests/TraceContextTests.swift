import Logging
import RPC
import Testing

/// W3C trace context (https://www.w3.org/TR/trace-context/): what a server accepts as a
/// caller's `traceparent`, and the spans it makes from it.
@Suite("Trace context")
struct TraceContextTests {
    static let valid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

    @Test("a valid traceparent names its trace, span and flags")
    func parsesValid() throws {
        let parsed = try #require(TraceContext.parse(traceparent: Self.valid))
        #expect(parsed.traceIDText == "4bf92f3577b34da6a3ce929d0e0e4736")
        #expect(parsed.spanIDText == "00f067aa0ba902b7")
        #expect(parsed.flags == 1)
        #expect(parsed.traceparent == Self.valid)
        // A later version may carry more after a dash; its first fields are read.
        #expect(TraceContext.parse(traceparent: "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-more")?.flags == 0)
        // Every digit, both ways, and flags other than 01.
        for flags: UInt8 in [0x00, 0xFF] {
            let every = TraceContext(
                traceID: (0x0123_4567_89AB_CDEF, 0xFEDC_BA98_7654_3210), spanID: 0x89AB_CDEF_0123_4567, parentSpanID: nil,
                flags: flags)
            let text = "00-0123456789abcdeffedcba9876543210-89abcdef01234567-" + (flags == 0 ? "00" : "ff")
            #expect(every.traceparent == text)
            #expect(TraceContext.parse(traceparent: text) == every)
        }
        // A later version of exactly 55 characters is read too.
        #expect(TraceContext.parse(traceparent: "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")?.spanIDText == "00f067aa0ba902b7")
    }

    @Test("malformed traceparents are refused", arguments: [
        "", "00", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1",
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",  // upper case
        "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",  // version ff
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",  // zero trace id
        "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",  // zero span id
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-",  // version 00 is exactly 55
        "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
        // The bytes next to the digit ranges, and a byte above ASCII.
        "00-4bf92f3577b34da6a3ce929d0e0e473/-00f067aa0ba902b7-01", "00-4bf92f3577b34da6a3ce929d0e0e473:-00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e473`-00f067aa0ba902b7-01", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-\u{e9}",
        "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x",  // more, without a dash
    ])
    func refusesMalformed(text: String) {
        #expect(TraceContext.parse(traceparent: text) == nil)
    }

    @Test("a served call continues the caller's trace: same trace, the caller's span as parent, a new span, flags and state kept")
    func serverSpanContinues() throws {
        let span = TraceContext.serverSpan(traceparent: Self.valid, tracestate: "vendor=1")
        #expect(span.traceIDText == "4bf92f3577b34da6a3ce929d0e0e4736")
        #expect(span.parentSpanIDText == "00f067aa0ba902b7")
        #expect(span.spanID != 0 && span.spanIDText != "00f067aa0ba902b7")
        #expect(span.flags == 1)
        #expect(span.traceState == "vendor=1")
        // A tracestate beyond the specification's bound is not passed on.
        let long = String(repeating: "a", count: TraceContext.maxTraceStateBytes + 1)
        #expect(TraceContext.serverSpan(traceparent: Self.valid, tracestate: long).traceState == nil)
    }

    @Test("several tracestate fields are one list, joined; a traceparent sent twice is invalid")
    func repeatedFields() {
        var metadata = Metadata()
        metadata.add(MetadataKey.traceparent, Self.valid)
        metadata.add(MetadataKey.tracestate, "a=1")
        metadata.add(MetadataKey.tracestate, "b=2")
        let joined = TraceContext.serverSpan(metadata: metadata)
        #expect(joined.parentSpanIDText == "00f067aa0ba902b7")
        #expect(joined.traceState == "a=1,b=2")
        metadata.add(MetadataKey.traceparent, Self.valid)
        #expect(TraceContext.serverSpan(metadata: metadata).parentSpanID == nil)
    }

    @Test("without a valid traceparent a served call starts a new trace, a root")
    func serverSpanStarts() {
        let first = TraceContext.serverSpan(traceparent: "garbage", tracestate: "vendor=1")
        let second = TraceContext.serverSpan(traceparent: nil, tracestate: nil)
        #expect(first.parentSpanID == nil && second.parentSpanID == nil)
        #expect(first.traceIDText != second.traceIDText)
        #expect(first.traceState == nil, "a tracestate without its traceparent means nothing")
        #expect(TraceContext.parse(traceparent: first.traceparent)?.traceIDText == first.traceIDText)
    }

    @Test("a child span is in its parent's trace, with its parent's id, and ids do not repeat")
    func children() {
        let root = TraceContext.serverSpan(traceparent: nil, tracestate: nil)
        var seen: Set<UInt64> = [root.spanID]
        for _ in 0..<10_000 {
            let child = root.child()
            #expect(child.traceIDText == root.traceIDText && child.parentSpanID == root.spanID)
            seen.insert(child.spanID)
        }
        #expect(seen.count == 10_001)
    }

    @Test("a call made while serving one is its span's child: no traceparent of the caller's metadata is copied raw")
    func propagation() throws {
        var metadata = Metadata()
        metadata.set(MetadataKey.traceparent, Self.valid)
        metadata.set(MetadataKey.authorization, "Bearer t")
        let context = ServerContext(
            method: MethodInfo(service: "s.v1.S", method: "M", kind: .unary, auth: .none, idempotent: true, requestFields: [], responseFields: []), metadata: metadata, deadline: nil, requestID: "r",
            peer: "127.0.0.1:1", logger: .init(label: "trace-test"))
        let options = CallOptions.propagating(from: context)
        #expect(options.trace == context.trace)
        #expect(options.metadata[MetadataKey.traceparent] == nil)
        #expect(options.metadata[MetadataKey.authorization] == "Bearer t")
        var sent = Metadata()
        let span = try #require(options.trace?.child())
        span.write(into: &sent)
        #expect(TraceContext.parse(traceparent: sent[MetadataKey.traceparent] ?? "")?.spanID == span.spanID)
        #expect(span.parentSpanID == context.trace.spanID)
    }
}
