import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing
import JSON

/// Connect and gRPC-Web through a real gateway (API.md §9), with curl as the client: over
/// HTTP/1.1 (keep-alive, chunked streams) and HTTP/2, in front of the four services.
@Suite("Web edge RPC, live")
struct WebEdgeRPCLiveTests {
    @Test("curl prints a product over Connect (HTTP/1.1 and HTTP/2); errors carry their reason; a GET is cacheable when anonymous")
    func connectUnary() async throws {
        try await withLiveGateway { stack in
            let base = "http://127.0.0.1:\(try stack.service(.gateway).port)"
            // As the issue and README show it.
            let printed = try await Command.run(
                "curl", ["-s", "-H", "content-type: application/json", "-d", #"{"id":1}"#, "\(base)/shop.catalog.v1.CatalogService/GetProduct"],
                timeout: .seconds(30))
            let product = try JSONCodec.shared.decode(ProductResponse.self, from: Data(printed.output.utf8)).product
            #expect(product.id == 1)

            for (version, requestID) in [("--http1.1", "live-h1"), ("--http2-prior-knowledge", "live-h2")] {
                let answer = try await Self.curl(
                    base + CatalogContract.getProduct.path, version: version,
                    headers: ["content-type: application/json", "connect-protocol-version: 1", "x-request-id: \(requestID)"],
                    body: Data(#"{"id":2}"#.utf8))
                #expect(answer.status == 200, "\(version): \(answer)")
                #expect(answer.headers["content-type"] == "application/json")
                #expect(answer.headers["x-request-id"] == requestID)
                #expect(try JSONCodec.shared.decode(ProductResponse.self, from: answer.body).product.id == 2)
            }

            let missing = try await Self.curl(
                base + CatalogContract.getProduct.path, headers: ["content-type: application/json"], body: Data(#"{"id":999999}"#.utf8))
            #expect(missing.status == 404, "\(missing)")
            #expect(missing.headers["shop-error-reason"] == "PRODUCT_NOT_FOUND")
            let error = try JSONCodec.shared.decode(JSONValue.self, from: missing.body)
            #expect(error["code"] == .string("not_found"))
            #expect(error["details"]?.arrayValue?.first?["debug"]?["reason"] == .string("PRODUCT_NOT_FOUND"))

            // Who may not call is told so, in Connect's terms, by the same interceptors as gRPC.
            let basket = try await Self.curl(
                base + BasketContract.getBasket.path, headers: ["content-type: application/json"], body: Data("{}".utf8))
            #expect(basket.status == 401, "\(basket)")
            #expect(try JSONCodec.shared.decode(JSONValue.self, from: basket.body)["code"] == .string("unauthenticated"))

            let query = "encoding=json&message=%7B%22id%22%3A3%7D&connect=v1"
            let anonymous = try await Self.curl(base + CatalogContract.getProduct.path + "?" + query)
            #expect(anonymous.status == 200, "\(anonymous)")
            #expect(anonymous.headers["cache-control"] == "public, max-age=60")
            #expect(try JSONCodec.shared.decode(ProductResponse.self, from: anonymous.body).product.id == 3)
            let shopper = try await stack.newShopper()
            let signedIn = try await Self.curl(
                base + StorefrontContract.getProductPage.path + "?encoding=json&message=%7B%22productId%22%3A3%7D",
                headers: ["authorization: Bearer \(shopper.accessToken)"])
            #expect(signedIn.status == 200, "\(signedIn)")
            #expect(signedIn.headers["cache-control"] == "private, no-store")
            let lines = try stack.service(.gateway).log.lines
            for requestID in ["live-h1", "live-h2"] {
                #expect(lines.contains { $0.contains("method=\(CatalogContract.getProduct.path) ") && $0.contains("request-id=\(requestID) ") })
            }
        }
    }

    @Test("Connect calls meet the gateway's rate limit as gRPC calls do: 429 resource_exhausted, reason RATE_LIMITED")
    func connectRateLimited() async throws {
        try await withLiveGateway(gatewayArguments: ["--rate-limit", "0.1", "--rate-burst", "2"]) { stack in
            let url = "http://127.0.0.1:\(try stack.service(.gateway).port)" + CatalogContract.getProduct.path
            var statuses: [Int] = []
            var reasons: [String?] = []
            var waits: [String?] = []
            for _ in 0..<4 {
                let answer = try await Self.curl(url, headers: ["content-type: application/json"], body: Data(#"{"id":1}"#.utf8))
                statuses.append(answer.status)
                reasons.append(answer.headers["shop-error-reason"])
                waits.append(answer.headers["retry-after"])
            }
            #expect(statuses.prefix(2) == [200, 200], "\(statuses)")
            #expect(statuses.dropFirst(2).allSatisfy { $0 == 429 }, "\(statuses)")
            #expect(reasons.last == "RATE_LIMITED")
            // HTTP's Retry-After says how long: one token every 10 s.
            #expect(waits.prefix(2) == [nil, nil], "\(waits)")
            #expect(waits.dropFirst(2).allSatisfy { $0.flatMap { Int($0) }.map { (1...10).contains($0) } == true }, "\(waits)")
        }
    }

    @Test("ImportProducts (client streaming) over Connect on HTTP/2 and HTTP/1.1: every envelope imported, the admin key checked")
    func connectClientStream() async throws {
        try await withLiveGateway { stack in
            let url = "http://127.0.0.1:\(try stack.service(.gateway).port)" + CatalogContract.importProducts.path
            var body = Data()
            for index in 0..<3 {
                let product = Product(
                    title: "Imported over Connect \(index)", description: "Through the web edge", category: "electronics",
                    price: Money(amount: 2_000 + index, currency: "USD"), image: "https://example.com/c\(index).jpg",
                    rating: Rating(rate: 4, count: 1), stock: 5)
                body += ConnectEnvelopeBytes.frame(try JSONCodec.shared.encode(ImportProductsRequest(product: product)))
            }
            for version in ["--http2-prior-knowledge", "--http1.1"] {
                let answer = try await Self.curl(
                    url, version: version,
                    headers: ["content-type: application/connect+json", "connect-protocol-version: 1", "x-api-key: \(stack.adminKey)"],
                    body: body)
                let envelopes = ConnectEnvelopeBytes.envelopes(answer.body)
                #expect(answer.status == 200 && envelopes.map(\.flags) == [0, 2], "\(version): \(answer)")
                guard envelopes.count == 2 else { continue }
                let imported = try JSONCodec.shared.decode(ImportProductsResponse.self, from: envelopes[0].message)
                // The second round replaces what the first created (same titles).
                #expect(imported.created + imported.updated == 3 && imported.failed.isEmpty, "\(version): \(imported)")
                #expect(try JSONCodec.shared.decode(JSONValue.self, from: envelopes[1].message) == .object([:]))
            }
            let refused = try await Self.curl(url, headers: ["content-type: application/connect+json"], body: body)
            let end = ConnectEnvelopeBytes.envelopes(refused.body).last.map { try? JSONCodec.shared.decode(JSONValue.self, from: $0.message) }
            #expect(end??["error"]?["code"] == .string("unauthenticated"), "\(refused)")
        }
    }

    @Test("WatchBasket over Connect streaming on HTTP/1.1: chunked envelopes, a change made elsewhere arrives, the deadline ends it")
    func connectWatch() async throws {
        try await withLiveGateway { stack in
            let base = "http://127.0.0.1:\(try stack.service(.gateway).port)"
            let shopper = try await stack.newShopper()
            let scratch = try TestScratch.makeDirectory(prefix: "connect-watch")
            defer { try? FileManager.default.removeItem(at: scratch) }
            let bodyFile = scratch.appendingPathComponent("request")
            try ConnectEnvelopeBytes.frame(Data("{}".utf8)).write(to: bodyFile)
            let output = scratch.appendingPathComponent("body")
            let headerFile = scratch.appendingPathComponent("headers")
            let curl = Process()
            curl.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            curl.arguments = [
                "curl", "-s", "-N", "--http1.1", "--max-time", "30", "-D", headerFile.path, "-o", output.path,
                "-H", "content-type: application/connect+json", "-H", "connect-protocol-version: 1",
                "-H", "connect-timeout-ms: 4000", "-H", "authorization: Bearer \(shopper.accessToken)",
                "--data-binary", "@\(bodyFile.path)", base + BasketContract.watchBasket.path,
            ]
            try curl.run()

            // The first envelope (the basket as it is) arrives while the stream stays open.
            #expect(await eventually(within: .seconds(10)) {
                ConnectEnvelopeBytes.envelopes((try? Data(contentsOf: output)) ?? Data()).count >= 1
            })
            // The watch is a call in flight: counted started, not finished.
            let gatewayPort = try stack.service(.gateway).port
            let watch = "service=\"\(BasketContract.service)\",method=\"WatchBasket\""
            let during = try await MetricsScrape.fetch(port: gatewayPort)
            #expect(during.value("rpc_server_calls_started_total{\(watch)}") == 1, "\(during.lines(of: "rpc_server_calls_started_total"))")
            #expect(during.value("rpc_server_calls_total{\(watch),code=\"DEADLINE_EXCEEDED\"}") ?? 0 == 0)
            _ = try await stack.gateway.unary(BasketContract.addItem, AddItemRequest(productId: 4, count: 3), options: shopper.options())
            await onThread { curl.waitUntilExit() }
            #expect(curl.terminationStatus == 0)
            let after = try await MetricsScrape.fetch(port: gatewayPort)
            #expect(after.value("rpc_server_calls_started_total{\(watch)}") == 1)
            #expect(after.value("rpc_server_calls_total{\(watch),code=\"DEADLINE_EXCEEDED\"}") == 1, "\(after.lines(of: "rpc_server_calls_total"))")

            let headers = String(decoding: try Data(contentsOf: headerFile), as: UTF8.self).lowercased()
            #expect(headers.contains("transfer-encoding: chunked"), "\(headers)")
            #expect(headers.contains("content-type: application/connect+json"))
            let envelopes = ConnectEnvelopeBytes.envelopes(try Data(contentsOf: output))
            #expect(envelopes.map(\.flags) == [0, 0, 2], "\(envelopes)")
            guard envelopes.count == 3 else { return }
            #expect(try JSONCodec.shared.decode(Basket.self, from: envelopes[0].message).itemCount == 0)
            #expect(try JSONCodec.shared.decode(Basket.self, from: envelopes[1].message).itemCount == 3)
            let end = try JSONCodec.shared.decode(JSONValue.self, from: envelopes[2].message)
            #expect(end["error"]?["code"] == .string("deadline_exceeded"), "\(end)")
        }
    }

    @Test("gRPC-Web (binary and text) and CORS through a gateway with --cors-origin")
    func grpcWebAndCORS() async throws {
        let origin = "http://shop.example:3000"
        try await withLiveGateway(gatewayArguments: ["--cors-origin", origin]) { stack in
            let base = "http://127.0.0.1:\(try stack.service(.gateway).port)"
            let request = ConnectEnvelopeBytes.frame(Data(#"{"id":1}"#.utf8))
            let binary = try await Self.curl(
                base + CatalogContract.getProduct.path,
                headers: ["content-type: application/grpc-web+json", "x-grpc-web: 1", "origin: \(origin)"], body: request)
            #expect(binary.status == 200, "\(binary)")
            #expect(binary.headers["content-type"] == "application/grpc-web+json")
            #expect(binary.headers["access-control-allow-origin"] == origin)
            let frames = ConnectEnvelopeBytes.envelopes(binary.body)
            #expect(frames.map(\.flags) == [0, 0x80])
            guard frames.count == 2 else { return }
            #expect(try JSONCodec.shared.decode(ProductResponse.self, from: frames[0].message).product.id == 1)
            #expect(frames[1].message == Data("grpc-status: 0\r\n".utf8))

            let missing = Data(ConnectEnvelopeBytes.frame(Data(#"{"id":999999}"#.utf8)).base64EncodedString().utf8)
            let text = try await Self.curl(
                base + CatalogContract.getProduct.path, headers: ["content-type: application/grpc-web-text"], body: missing)
            #expect(text.status == 200, "\(text)")
            let decoded = try #require(Data(base64Encoded: text.body))
            let trailer = String(decoding: try #require(ConnectEnvelopeBytes.envelopes(decoded).first).message, as: UTF8.self)
            #expect(trailer.contains("grpc-status: 5\r\n"), "\(trailer)")
            #expect(trailer.contains("shop-error-reason: PRODUCT_NOT_FOUND\r\n"))
            #expect(text.headers["access-control-allow-origin"] == nil, "no origin, no CORS headers")

            // Over HTTP/2 too. Known issue: the HTTP/2 transport takes every content type that
            // starts with application/grpc for gRPC (KnownHeader.isGRPC), so gRPC-Web there
            // reaches the gRPC path (UNIMPLEMENTED/UNSUPPORTED_CODEC) instead of this edge.
            let overHTTP2 = try await Self.curl(
                base + CatalogContract.getProduct.path, version: "--http2-prior-knowledge",
                headers: ["content-type: application/grpc-web+json"], body: request)
            #expect(ConnectEnvelopeBytes.envelopes(overHTTP2.body).map(\.flags) == [0, 0x80], "\(overHTTP2)")

            let preflight = try await Self.curl(
                base + CatalogContract.getProduct.path, method: "OPTIONS",
                headers: ["origin: \(origin)", "access-control-request-method: POST", "access-control-request-headers: content-type,x-grpc-web"])
            #expect(preflight.status == 204, "\(preflight)")
            #expect(preflight.headers["access-control-allow-origin"] == origin)
            #expect(preflight.headers["access-control-allow-methods"] == "GET, POST")
            #expect(preflight.headers["access-control-allow-headers"]?.contains("x-grpc-web") == true)
            let stranger = try await Self.curl(
                base + CatalogContract.getProduct.path, method: "OPTIONS",
                headers: ["origin: http://evil.example", "access-control-request-method: POST"])
            #expect(stranger.status == 405)
            #expect(stranger.headers["access-control-allow-origin"] == nil)
        }
    }

    /// What curl got: the status, the headers (names lower-cased; the last of each) and the body.
    struct Answer: CustomStringConvertible {
        var status: Int
        var headers: [String: String]
        var body: Data
        var description: String { "\(status) \(headers)\n\(String(decoding: body, as: UTF8.self))" }
    }

    /// Makes one request with curl (`version`: `--http1.1` or `--http2-prior-knowledge`).
    static func curl(
        _ url: String, method: String? = nil, version: String = "--http1.1", headers: [String] = [], body: Data? = nil
    ) async throws -> Answer {
        let scratch = try TestScratch.makeDirectory(prefix: "web-edge-curl")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let headerFile = scratch.appendingPathComponent("headers").path
        let bodyFile = scratch.appendingPathComponent("body").path
        var arguments = ["-s", version, "--max-time", "20", "-D", headerFile, "-o", bodyFile]
        if let method { arguments += ["-X", method] }
        for header in headers { arguments += ["-H", header] }
        if let body {
            let requestFile = scratch.appendingPathComponent("request")
            try body.write(to: requestFile)
            arguments += ["--data-binary", "@\(requestFile.path)"]
        }
        let result = try await Command.run("curl", arguments + [url], timeout: .seconds(30))
        try #require(result.status == 0, "curl \(url): \(result)")
        let head = String(decoding: try Data(contentsOf: URL(fileURLWithPath: headerFile)), as: UTF8.self)
        let lines = head.replacingOccurrences(of: "\r\n", with: "\n").split(separator: "\n")
        let status = try #require(lines.first?.split(separator: " ").dropFirst().first.flatMap { Int($0) }, "\(head)")
        var fields: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let answerBody = (try? Data(contentsOf: URL(fileURLWithPath: bodyFile))) ?? Data()
        return Answer(status: status, headers: fields, body: answerBody)
    }
}

/// Connect envelopes and gRPC-Web frames as bytes (one flag byte, a big-endian length).
enum ConnectEnvelopeBytes {
    static func frame(_ message: Data, flags: UInt8 = 0) -> Data {
        let length = UInt32(message.count)
        return Data([flags, UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]) + message
    }

    /// The whole envelopes of `body`, in order (a partial last one is left out).
    static func envelopes(_ body: Data) -> [(flags: UInt8, message: Data)] {
        var result: [(UInt8, Data)] = []
        var offset = body.startIndex
        while body.endIndex - offset >= 5 {
            let length = body[(offset + 1)..<(offset + 5)].reduce(0) { $0 << 8 | Int($1) }
            guard body.endIndex - offset - 5 >= length else { break }
            result.append((body[offset], Data(body[(offset + 5)..<(offset + 5 + length)])))
            offset += 5 + length
        }
        return result
    }
}
