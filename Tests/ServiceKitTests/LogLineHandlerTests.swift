import Logging
import RPC
@testable import ServiceKit
import Testing

@Suite("Log lines")
struct LogLineHandlerTests {
    @Test("UTC timestamps are formatted without the C library", arguments: [
        (0, "1970-01-01T00:00:00"), (951_782_400, "2000-02-29T00:00:00"), (1_794_354_938, "2026-11-10T23:55:38"),
        (4_102_444_799, "2099-12-31T23:59:59"), (-1, "1969-12-31T23:59:59"),
    ])
    func timestamps(seconds: Int, expected: String) {
        #expect(Timestamp.format(seconds) == expected)
    }

    @Test("the current timestamp has milliseconds and a Z")
    func currentTimestamp() {
        let text = Timestamp.logText()
        #expect(text.count == 24)
        #expect(text.hasSuffix("Z"))
        #expect(text.dropLast(4).last == ".")
    }

    @Test("a line carries level, label, message and metadata in key order, on one line")
    func lineShape() {
        let bytes = LogLineHandler.line(
            level: .info, label: "auth-svc", message: "call",
            metadata: ["status": "OK", "method": "/shop.auth.v1.AuthService/SignIn", "duration-ms": "1.250"])
        let line = String(decoding: bytes, as: UTF8.self)
        #expect(line.hasSuffix(" info auth-svc: call duration-ms=1.250 method=/shop.auth.v1.AuthService/SignIn status=OK\n"))
        #expect(line.filter { $0 == "\n" }.count == 1)
    }

    /// Call lines with no optional field, with every one, and with values that need quoting.
    static let callLines = [
        CallLogLine(requestID: "fb3fe6a00000003", method: "/bench.v1.BenchService/Echo", status: "OK", durationMilliseconds: "0.198", peer: "127.0.0.1:55966"),
        CallLogLine(
            requestID: "-", method: "/shop.catalog.v1.CatalogService/GetProduct", status: "CANCELLED", reason: "UPSTREAM_UNAVAILABLE",
            durationMilliseconds: "12.000", peer: "[::1]:1", httpStatus: 415, handlerStatus: "INTERNAL", cause: "a cause with \"quotes\"\nand a break"),
        CallLogLine(requestID: "", method: "/a b", status: "UNKNOWN", durationMilliseconds: "1.000", peer: "p=q", httpStatus: 405),
    ]

    @Test("a call line written from its fields is the line its metadata makes", arguments: callLines)
    func callLineFromFields(call: CallLogLine) {
        let direct = String(decoding: LogLineHandler.callLine(call, level: .info, label: "gateway"), as: UTF8.self)
        let general = String(decoding: LogLineHandler.line(level: .info, label: "gateway", message: "call", metadata: call.metadata), as: UTF8.self)
        // The timestamps (24 characters) may fall in different milliseconds.
        #expect(direct.dropFirst(24) == general.dropFirst(24))
        #expect(direct.dropFirst(24).hasPrefix(" info gateway: call "))
    }

    @Test("values with spaces, quotes, = or line breaks are quoted and escaped", arguments: [
        ("plain", "plain"), ("", "\"\""), ("two words", "\"two words\""), ("a=b", "\"a=b\""),
        ("say \"hi\"", "\"say \\\"hi\\\"\""), ("line\nbreak", "\"line\\nbreak\""), ("back\\slash", "\"back\\\\slash\""),
    ])
    func quoting(value: String, expected: String) {
        var bytes: [UInt8] = []
        LogLineHandler.appendValue(value, to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == expected)
    }

    @Test("metadata and level set on a handler read back")
    func handlerState() {
        var handler = LogLineHandler(label: "svc", level: .trace)
        handler[metadataKey: "request-id"] = "r-1"
        #expect(handler[metadataKey: "request-id"] == "r-1")
        #expect(handler.logLevel == .trace)
    }
}
