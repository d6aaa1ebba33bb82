import Foundation
import RPC
import Testing
import JSON

@Suite("RPCError trailers")
struct RPCErrorTrailersTests {
    private static func metadata(_ fields: [(String, String)]) -> Metadata {
        var metadata = Metadata()
        for (name, value) in fields { metadata.add(name, value) }
        return metadata
    }

    private static let sample = RPCError(
        code: .invalidArgument, reason: "INVALID_EMAIL", message: "Adresse invalide: « ✓ » 100%\nsecond line",
        details: .object([
            "fieldViolations": .array([
                .object(["field": .string("email"), "description": .string("must contain @")])
            ]),
            "attempt": .number(3),
            "ratio": .number(0.25),
            "retry": .bool(false),
            "hint": .null,
        ]))

    @Test("a message over 1 KiB is cut at a character boundary and ends in …; details over 8 KiB are left out")
    func limits() throws {
        let long = RPCError(
            code: .invalidArgument, reason: "MALFORMED_MESSAGE", message: "sort: unknown value '" + String(repeating: "é", count: 5000) + "'",
            details: .object(["echo": .string(String(repeating: "x", count: 10_000))]))
        let metadata = Self.metadata(long.trailers)
        let message = PercentEncoding.decode(try #require(metadata["grpc-message"]))
        #expect(message.utf8.count <= RPCError.maximumTrailerMessageBytes && message.hasSuffix("…"))
        #expect(long.message.hasPrefix(message.dropLast()))
        #expect(metadata["shop-error-details-bin"] == nil)
        #expect(metadata["shop-error-reason"] == "MALFORMED_MESSAGE")
        // At the limit, nothing is cut.
        let exact = String(repeating: "a", count: RPCError.maximumTrailerMessageBytes)
        #expect(Self.metadata(RPCError(code: .internal, message: exact).trailers)["grpc-message"] == exact)
    }

    @Test("the trailers carry the status number, the percent-encoded message, the reason and base64 details")
    func trailerFields() throws {
        let fields = Self.sample.trailers
        let metadata = Self.metadata(fields)
        #expect(fields.first?.0 == "grpc-status")
        #expect(metadata["grpc-status"] == "3")
        #expect(metadata["grpc-message"] == PercentEncoding.encode(Self.sample.message))
        #expect(metadata["grpc-message"]?.contains("%0A") == true)
        #expect(metadata["grpc-message"]?.contains("%25") == true)
        #expect(metadata["shop-error-reason"] == "INVALID_EMAIL")
        let encoded = try #require(metadata["shop-error-details-bin"])
        let json = try #require(Data(base64Encoded: encoded))
        #expect(try JSONCodec.shared.decode(JSONValue.self, from: json) == Self.sample.details)
        // Every value is printable ASCII, as HTTP/2 trailers require.
        for (_, value) in fields {
            #expect(value.utf8.allSatisfy { $0 >= 0x20 && $0 <= 0x7E }, "\(value)")
        }
    }

    @Test("the trailer names are the documented ones")
    func trailerNames() {
        #expect(RPCError.Trailer.status == "grpc-status")
        #expect(RPCError.Trailer.message == "grpc-message")
        #expect(RPCError.Trailer.reason == "shop-error-reason")
        #expect(RPCError.Trailer.details == "shop-error-details-bin")
    }

    @Test("an error without reason, details or message sends only grpc-status")
    func minimalTrailers() {
        let fields = RPCError(code: .unavailable, message: "").trailers
        #expect(fields.map(\.0) == ["grpc-status"])
        #expect(fields.map(\.1) == ["14"])
    }

    @Test("a successful call's trailers are grpc-status 0")
    func okTrailers() {
        #expect(RPCError.okTrailers.map(\.0) == ["grpc-status"])
        #expect(RPCError.okTrailers.map(\.1) == ["0"])
        #expect(RPCError.fromTrailers(Self.metadata(RPCError.okTrailers), httpStatus: 200) == nil)
    }

    @Test("code, reason, message and details survive a round trip through trailers")
    func roundTrip() throws {
        let received = try #require(RPCError.fromTrailers(Self.metadata(Self.sample.trailers), httpStatus: 200))
        #expect(received.code == Self.sample.code)
        #expect(received.reason == Self.sample.reason)
        #expect(received.message == Self.sample.message)
        #expect(received.details == Self.sample.details)
        #expect(received.cause == nil)
    }

    @Test("every code survives a round trip", arguments: RPCCode.all)
    func everyCodeRoundTrips(code: RPCCode) throws {
        let error = RPCError(code: code, message: "m")
        let received = try #require(RPCError.fromTrailers(Self.metadata(error.trailers), httpStatus: 200))
        #expect(received.code == code)
        #expect(received.reason == nil)
        #expect(received.details == nil)
    }

    @Test("grpc-status 0 means success even with a message")
    func statusZero() {
        #expect(RPCError.fromTrailers(["grpc-status": "0", "grpc-message": "fine"], httpStatus: 200) == nil)
    }

    @Test(
        "a missing grpc-status is synthesized from the HTTP status",
        arguments: [(503, RPCCode.unavailable), (200, .internal), (404, .unimplemented), (401, .unauthenticated), (500, .unknown)])
    func missingStatus(httpStatus: Int, code: RPCCode) throws {
        let error = try #require(RPCError.fromTrailers(Metadata(), httpStatus: httpStatus))
        #expect(error.code == code)
    }

    @Test("an unparseable grpc-status is UNKNOWN", arguments: ["abc", "", "1.0", "0x5", " "])
    func unparseableStatus(status: String) throws {
        let error = try #require(RPCError.fromTrailers(["grpc-status": status], httpStatus: 200))
        #expect(error.code == .unknown)
    }

    @Test("a grpc-status outside 1...16 is UNKNOWN", arguments: ["17", "-1", "999"])
    func outOfRangeStatus(status: String) throws {
        let error = try #require(RPCError.fromTrailers(["grpc-status": status], httpStatus: 200))
        #expect(error.code == .unknown)
    }

    @Test("details base64 without padding is accepted", arguments: ["{\"a\":1}", "{\"ab\":1}", "{\"abc\":12}"])
    func unpaddedBase64(json: String) throws {
        let padded = Data(json.utf8).base64EncodedString()
        let unpadded = String(padded.prefix { $0 != "=" })
        let error = try #require(
            RPCError.fromTrailers(["grpc-status": "5", "shop-error-details-bin": unpadded], httpStatus: 200))
        #expect(error.details == (try JSONCodec.shared.decode(JSONValue.self, from: Data(json.utf8))))
    }

    @Test("details that are not base64 JSON are dropped, not fatal")
    func badDetails() throws {
        let notBase64 = try #require(
            RPCError.fromTrailers(["grpc-status": "5", "shop-error-details-bin": "!!!"], httpStatus: 200))
        #expect(notBase64.code == .notFound)
        #expect(notBase64.details == nil)
        let notJSON = try #require(
            RPCError.fromTrailers(
                ["grpc-status": "5", "shop-error-details-bin": Data("{oops".utf8).base64EncodedString()], httpStatus: 200))
        #expect(notJSON.details == nil)
    }

    @Test("trailer names are matched case-insensitively")
    func caseInsensitiveNames() throws {
        let error = try #require(
            RPCError.fromTrailers(
                ["Grpc-Status": "7", "GRPC-MESSAGE": "no%20way", "Shop-Error-Reason": "NOT_OWNER"], httpStatus: 200))
        #expect(error.code == .permissionDenied)
        #expect(error.message == "no way")
        #expect(error.reason == "NOT_OWNER")
    }
}
