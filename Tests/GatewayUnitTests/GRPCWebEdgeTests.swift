import Foundation
@testable import gateway
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing
import JSON

/// gRPC-Web calls on the web edge, against ``EdgeFixture``'s router.
@Suite("gRPC-Web calls on the web edge")
struct GRPCWebEdgeTests {
    func framed(_ messages: String...) -> Data {
        messages.reduce(into: Data()) { $0.append(ConnectEnvelope.frame(Data($1.utf8))) }
    }

    /// The trailer frame's fields.
    func trailers(_ frame: (flags: UInt8, message: Data)) -> [String: String] {
        #expect(frame.flags == 0x80)
        var fields: [String: String] = [:]
        let text = String(decoding: frame.message, as: UTF8.self)
        #expect(text.hasSuffix("\r\n"))
        for line in text.split(separator: "\r\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            fields[String(parts[0])] = String(parts[1].dropFirst())
        }
        return fields
    }

    @Test("a unary call answers 200 with the request's type, the message frame and an OK trailer frame", arguments: [
        "application/grpc-web+json", "application/grpc-web",
    ])
    func unary(contentType: String) async throws {
        let state = try await EdgeFixture.serve(EdgeFixture.request(
            EdgeFixture.say.path, headers: [("content-type", contentType), ("x-grpc-web", "1"), ("x-request-id", "w-1")],
            body: framed(#"{"text":"web"}"#)))
        #expect(state.status == 200)
        #expect(state.headers["content-type"] == contentType)
        #expect(state.headers["x-request-id"] == "w-1")
        let frames = EdgeFixture.envelopes(state.body)
        #expect(frames.count == 2)
        #expect(frames[0].flags == 0)
        #expect(try JSONCodec.shared.decode(EdgeNote.self, from: frames[0].message).text == "said web")
        #expect(frames[1].message == Data("grpc-status: 0\r\n".utf8))
        #expect(state.notedPath == EdgeFixture.say.path)
        #expect(state.notedStatus == nil)
    }

    @Test("an error is a trailer frame: status, percent-encoded message, reason, base64 details")
    func error() async throws {
        let state = try await EdgeFixture.serve(EdgeFixture.request(
            EdgeFixture.fail.path, headers: [("content-type", "application/grpc-web+json")], body: framed("{}")))
        #expect(state.status == 200)
        let frames = EdgeFixture.envelopes(state.body)
        #expect(frames.count == 1)
        let fields = trailers(frames[0])
        #expect(fields["grpc-status"] == "6")
        #expect(fields["grpc-message"] == "Already in the basket: 100%25 sure, %C3%BCn%C3%AFcode.")
        #expect(PercentEncoding.decode(try #require(fields["grpc-message"])) == EdgeFixture.failure.message)
        #expect(fields["shop-error-reason"] == "ALREADY_IN_BASKET")
        let encodedDetails = try #require(fields["shop-error-details-bin"])
        let details = try #require(Data(base64Encoded: encodedDetails))
        #expect(try EdgeFixture.json(details)["productId"] == .number(7))
        #expect(state.notedStatus?.code == .alreadyExists)
    }

    @Test("a server stream sends each message as a frame as it comes, then the trailer frame")
    func serverStream() async throws {
        let state = try await EdgeFixture.serve(EdgeFixture.request(
            EdgeFixture.count.path, headers: [("content-type", "application/grpc-web+json")], body: framed(#"{"text":"2"}"#)))
        #expect(state.streamed)
        #expect(state.parts.count == 3)
        let frames = EdgeFixture.envelopes(state.body)
        #expect(frames.map(\.flags) == [0, 0, 0x80])
        #expect(trailers(frames[2]) == ["grpc-status": "0"])
        let failed = try await EdgeFixture.serve(EdgeFixture.request(
            EdgeFixture.failStream.path, headers: [("content-type", "application/grpc-web+json")], body: framed("{}")))
        let failedFrames = EdgeFixture.envelopes(failed.body)
        #expect(failedFrames.map(\.flags) == [0, 0x80])
        #expect(trailers(failedFrames[1])["grpc-status"] == "6")
    }

    @Test("text mode: a base64 request, even in separately padded chunks, and a base64 answer")
    func textUnary() async throws {
        // Two chunks, each padded on its own, as the spec allows a client to send.
        let frame = framed(#"{"text":"txt"}"#)
        let chunked = frame.prefix(7).base64EncodedString() + frame.dropFirst(7).base64EncodedString()
        #expect(chunked.dropLast().contains("="))
        let state = try await EdgeFixture.serve(EdgeFixture.request(
            EdgeFixture.say.path, headers: [("content-type", "application/grpc-web-text")], body: Data(chunked.utf8)))
        #expect(state.headers["content-type"] == "application/grpc-web-text")
        let body = try #require(Data(base64Encoded: state.body))
        let frames = EdgeFixture.envelopes(body)
        #expect(try JSONCodec.shared.decode(EdgeNote.self, from: frames[0].message).text == "said txt")
        #expect(frames[1].message == Data("grpc-status: 0\r\n".utf8))
    }

    @Test("text mode streams: no padding before the end, so the body decodes whole or in groups of four")
    func textStream() async throws {
        for count in 1...4 {
            let state = try await EdgeFixture.serve(EdgeFixture.request(
                EdgeFixture.count.path, headers: [("content-type", "application/grpc-web-text+json")],
                body: Data(framed(#"{"text":"\#(count * 4)"}"#).base64EncodedString().utf8)))
            #expect(state.parts.count == count * 4 + 1)
            for part in state.parts.dropLast() {
                #expect(part.count % 4 == 0)
                #expect(!part.contains(UInt8(ascii: "=")))
            }
            let body = try #require(Data(base64Encoded: state.body))
            let frames = EdgeFixture.envelopes(body)
            #expect(frames.count == count * 4 + 1)
            for (index, frame) in frames.dropLast().enumerated() {
                #expect(try JSONCodec.shared.decode(EdgeNote.self, from: frame.message).text == "\(index + 1)")
                #expect((5 + frame.message.count) % 3 == 0)
            }
        }
    }

    @Test("refusals are trailer frames with the gRPC path's codes", arguments: [
        ("/test.edge.v1.EdgeService/Nope", [], Data([0, 0, 0, 0, 2, 0x7B, 0x7D]), "12", "UNKNOWN_METHOD"),
        (EdgeFixture.say.path, [("grpc-timeout", "soon")], Data([0, 0, 0, 0, 2, 0x7B, 0x7D]), "3", "INVALID_TIMEOUT"),
        (EdgeFixture.say.path, [("grpc-encoding", "gzip")], Data([0, 0, 0, 0, 2, 0x7B, 0x7D]), "12", "UNSUPPORTED_ENCODING"),
        (EdgeFixture.say.path, [], Data(), "12", "CARDINALITY_VIOLATION"),
        (EdgeFixture.say.path, [], Data([0, 0, 0, 0, 2, 0x7B, 0x7D, 0, 0, 0, 0, 2, 0x7B, 0x7D]), "12", "CARDINALITY_VIOLATION"),
        (EdgeFixture.say.path, [], Data([0, 0, 0, 0, 9]), "3", "MALFORMED_MESSAGE"),
        (EdgeFixture.say.path, [], Data([1, 0, 0, 0, 0]), "12", "COMPRESSION_NOT_NEGOTIATED"),
    ] as [(String, [(String, String)], Data, String, String)])
    func refusals(path: String, headers: [(String, String)], body: Data, status: String, reason: String) async throws {
        let state = try await EdgeFixture.serve(EdgeFixture.request(
            path, headers: [("content-type", "application/grpc-web+json")] + headers, body: body))
        #expect(state.status == 200)
        let frames = EdgeFixture.envelopes(state.body)
        #expect(frames.count == 1)
        let fields = trailers(try #require(frames.first))
        #expect(fields["grpc-status"] == status)
        #expect(fields["shop-error-reason"] == reason)
        #expect(state.notedStatus != nil)
    }

    @Test("a text body that is not base64 is INVALID_ARGUMENT, answered in base64")
    func badText() async throws {
        let state = try await EdgeFixture.serve(EdgeFixture.request(
            EdgeFixture.say.path, headers: [("content-type", "application/grpc-web-text")], body: Data("not*base64".utf8)))
        let frames = EdgeFixture.envelopes(try #require(Data(base64Encoded: state.body)))
        #expect(trailers(try #require(frames.first))["grpc-status"] == "3")
    }

    @Test("grpc-timeout is the deadline: a call still running is DEADLINE_EXCEEDED")
    func deadline() async throws {
        let probe = EdgeProbe()
        let state = try await EdgeFixture.serve(
            EdgeFixture.request(
                EdgeFixture.hang.path, headers: [("content-type", "application/grpc-web+json"), ("grpc-timeout", "50m")],
                body: framed("{}")),
            edge: EdgeFixture.edge(probe))
        #expect(trailers(try #require(EdgeFixture.envelopes(state.body).first))["grpc-status"] == "4")
        #expect(await eventually { probe.allCancelled() })
        let seen = try await EdgeFixture.serve(EdgeFixture.request(
            EdgeFixture.seen.path, headers: [("content-type", "application/grpc-web+json"), ("grpc-timeout", "3S")], body: framed("{}")))
        let call = try JSONCodec.shared.decode(SeenCall.self, from: EdgeFixture.envelopes(seen.body)[0].message)
        #expect((2500...3000).contains(try #require(call.remainingMilliseconds)))
    }

    @Test("the text decoder reads padded chunks, whitespace and both alphabets, and refuses what is not base64", arguments: [
        ("QQ==QkM=", Data("ABC".utf8)), ("QUJD\r\nREVG", Data("ABCDEF".utf8)), ("QUI", Data("AB".utf8)), ("QQ", Data("A".utf8)),
        ("-_-_", Data([0xFB, 0xFF, 0xBF])), ("+/+/", Data([0xFB, 0xFF, 0xBF])), ("", Data()),
        ("Q", nil), ("Q===", nil), ("QQ=Q", nil), ("QUJD=", nil), ("QQ*=", nil), ("QQ==Q", nil),
    ] as [(String, Data?)])
    func textDecoding(text: String, expected: Data?) {
        #expect((try? GRPCWebText.decode(Data(text.utf8))) == expected)
    }
}
