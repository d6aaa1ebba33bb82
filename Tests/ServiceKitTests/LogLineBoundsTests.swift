import Foundation
import Logging
import RPC
@testable import ServiceKit
import Testing

/// What a client can put into a log line is bounded: every value and message at most
/// ``LogLineHandler/maxFieldBytes`` as written, and the lines of refused calls sampled per second.
@Suite("Log line bounds")
struct LogLineBoundsTests {
    /// 15 KB, as an h2load flood sends in `x-request-id`.
    static let huge = String(repeating: "A", count: 15_000)

    /// Values as a client could make them: long plain, long with characters that are escaped,
    /// long multi-byte, long with control characters.
    static let hostileValues = [
        huge, String(repeating: "\"", count: 1_000), String(repeating: "é", count: 1_000), String(repeating: "\n\r\t\u{1B}", count: 300),
        String(repeating: "a b=", count: 500), String(repeating: "x", count: 257),
    ]

    /// The fields of a written line, by name: `name=value` or `name="quoted value"`.
    static func fields(of line: String) -> [String: String] {
        var fields: [String: String] = [:]
        guard let message = line.range(of: ": call ") else { return [:] }
        var rest = line[line.index(before: message.upperBound)...]  // from the space before the first field
        while let space = rest.firstIndex(of: " ") {
            rest = rest[rest.index(after: space)...]
            guard let equals = rest.firstIndex(of: "=") else { break }
            let name = String(rest[..<equals])
            var value = rest[rest.index(after: equals)...]
            var end = value.startIndex
            if value.first == "\"" {
                end = value.index(after: end)
                while end < value.endIndex, value[end] != "\"" { end = value.index(end, offsetBy: value[end] == "\\" ? 2 : 1) }
                end = value.index(after: end)
            } else {
                end = value.firstIndex { $0 == " " || $0 == "\n" } ?? value.endIndex
            }
            fields[name] = String(value[..<end])
            value = value[end...]
            rest = value
        }
        return fields
    }

    @Test("every field of a call line a client controls is written in at most 256 bytes", arguments: hostileValues)
    func callLineFieldsBounded(value: String) throws {
        let call = CallLogLine(
            requestID: value, method: value, status: value, reason: value, durationMilliseconds: "1.000", peer: value,
            httpStatus: nil, handlerStatus: value, cause: value, clientRequestID: value)
        let line = String(decoding: LogLineHandler.callLine(call, level: .info, label: "gateway"), as: UTF8.self)
        #expect(line.filter { $0 == "\n" }.count == 1 && line.hasSuffix("\n"), "the line breaks")
        let fields = Self.fields(of: line)
        let names = ["cause", "client-request-id", "duration-ms", "handler-status", "method", "peer", "reason", "request-id", "status"]
        #expect(Set(fields.keys) == Set(names), "\(fields.keys.sorted())")
        for name in names {
            let written = try #require(fields[name])
            #expect(written.utf8.count <= LogLineHandler.maxFieldBytes, "\(name) takes \(written.utf8.count) bytes")
            if name != "duration-ms" { #expect(written.contains("]"), "\(name) is not marked as cut: \(written)") }
        }
        // As metadata for any other handler: the same bound on the raw values.
        for (name, metadataValue) in call.metadata {
            #expect(metadataValue.description.utf8.count <= CallLogLine.maxFieldBytes, "\(name)")
        }
    }

    @Test("a value cut short keeps whole characters, its quotes and the mark of its length", arguments: hostileValues)
    func cutValue(value: String) {
        var bytes: [UInt8] = []
        LogLineHandler.appendValue(value, to: &bytes)
        #expect(bytes.count <= LogLineHandler.maxFieldBytes)
        #expect(String(validating: bytes, as: UTF8.self) != nil, "cut inside a character")
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.contains("...[\(value.utf8.count)B]"), "\(text)")
        #expect(!text.contains("\n") && !text.contains("\r") && !text.contains("\u{1B}"), "\(text)")
        if text.first == "\"" { #expect(text.last == "\"") }
    }

    @Test("a value that fits is written whole; a message is bounded and stays on one line")
    func fitsAndMessages() {
        var bytes: [UInt8] = []
        let fits = String(repeating: "x", count: 256)
        LogLineHandler.appendValue(fits, to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == fits)

        let line = String(decoding: LogLineHandler.line(level: .warning, label: "gateway", message: "failed: " + Self.huge + "\nforged line", metadata: [:]), as: UTF8.self)
        #expect(line.filter { $0 == "\n" }.count == 1)
        #expect(line.utf8.count <= 24 + " warning gateway: ".utf8.count + LogLineHandler.maxFieldBytes + 1, "\(line.utf8.count) bytes")
        #expect(line.contains("...[15020B]"))
        let escaped = String(decoding: LogLineHandler.line(level: .info, label: "x", message: "a\nb", metadata: [:]), as: UTF8.self)
        #expect(escaped.hasSuffix(" info x: a\\nb\n"))
    }

    @Test("a request id the transport refused appears in the line as a bounded client-request-id beside ours")
    func clientRequestIDField() throws {
        let id = RequestID(Self.huge)
        let call = CallLogLine(
            requestID: id.description, method: "/a.B/C", status: "OK", durationMilliseconds: "0.100", peer: "127.0.0.1:1",
            clientRequestID: id.clientNote)
        let fields = Self.fields(of: String(decoding: LogLineHandler.callLine(call, level: .info, label: "gateway"), as: UTF8.self))
        #expect(fields["request-id"]?.count == 15)
        #expect(fields["client-request-id"] == String(repeating: "A", count: 32) + "...[15000B]")
    }

    // MARK: Sampling

    @Test("refusals are told from calls the application answered", arguments: [
        (CallLogLine(requestID: "r", method: "/a.B/C", status: "UNKNOWN", durationMilliseconds: "0", peer: "p", httpStatus: 405), "HTTP-405"),
        (CallLogLine(requestID: "r", method: "/a.B/C", status: "RESOURCE_EXHAUSTED", reason: "RATE_LIMITED", durationMilliseconds: "0", peer: "p"), "RATE_LIMITED"),
        (CallLogLine(requestID: "r", method: "/a.B/C", status: "UNIMPLEMENTED", reason: "UNKNOWN_METHOD", durationMilliseconds: "0", peer: "p"), "UNKNOWN_METHOD"),
        (CallLogLine(requestID: "r", method: "/a.B/C", status: "OK", durationMilliseconds: "0", peer: "p"), nil),
        (CallLogLine(requestID: "r", method: "/a.B/C", status: "NOT_FOUND", reason: "PRODUCT_NOT_FOUND", durationMilliseconds: "0", peer: "p"), nil),
        (CallLogLine(requestID: "r", method: "/a.B/C", status: "INTERNAL", durationMilliseconds: "0", peer: "p"), nil),
    ] as [(CallLogLine, String?)])
    func refusals(call: CallLogLine, expected: String?) {
        #expect(call.refusal == expected)
    }

    @Test("the first N refused lines of a second are written, then one summary counts the rest by reason")
    func sampling() throws {
        let sampler = CallLineSampler(perSecond: 3)
        var written = 0
        for index in 0..<10 {
            let (write, summary) = sampler.admit(index < 7 ? "HTTP-405" : "RATE_LIMITED", label: "gateway", second: 5)
            #expect(summary == nil)
            if write { written += 1 }
        }
        #expect(written == 3)
        #expect(sampler.summary(before: 5) == nil, "a summary before its second is over")
        // The next second's first refusal brings the summary, and is written itself.
        let (write, summary) = sampler.admit("HTTP-405", label: "gateway", second: 6)
        #expect(write)
        let line = String(decoding: try #require(summary), as: UTF8.self)
        #expect(line.contains(" warning gateway: call lines suppressed count=7 reasons=HTTP-405:4,RATE_LIMITED:3 second=5\n"), "\(line)")
        #expect(sampler.summary(before: 7) == nil, "a second with nothing left out has no summary")

        // A flood's last second is summed up by whoever asks once it is over (the sink's writer).
        for _ in 0..<5 { _ = sampler.admit("RATE_LIMITED", label: "gateway", second: 9) }
        #expect(sampler.summary(before: 9) == nil)
        let last = String(decoding: try #require(sampler.summary(before: 10)), as: UTF8.self)
        #expect(last.contains("count=2 reasons=RATE_LIMITED:2 second=9"), "\(last)")
        #expect(sampler.summary(before: 11) == nil, "a summary written twice")
    }

    @Test("with 0 lines a second every refusal is counted; the reasons named are bounded")
    func samplingNone() throws {
        let sampler = CallLineSampler(perSecond: 0)
        for index in 0..<100 { #expect(!sampler.admit("REASON_\(index)", label: "svc", second: 1).write) }
        let line = String(decoding: try #require(sampler.summary(before: 2)), as: UTF8.self)
        #expect(line.contains("count=100 "), "\(line)")
        #expect(line.contains("OTHER:\(100 - CallLineSampler.maxKinds)"), "\(line)")
        #expect(line.utf8.count < 24 + 300 + 64)
    }
}
