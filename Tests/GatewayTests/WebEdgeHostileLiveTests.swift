import Foundation
import Glibc
import ServiceTestSupport
import Synchronization
import Testing

/// Hostile HTTP/1.1 input against a real gateway with the four services behind it (issue 26,
/// point 7; API.md §9): request smuggling, slow heads, floods of pipelined and keep-alive
/// requests, an oversized Connect body and header floods. After each, the gateway must still
/// be running and answer `/healthz` and a Connect GetProduct, and no request may have been
/// read out of a refused request's bytes: every smuggled request asks for a path starting
/// `/smuggled-`, which the gateway's call lines would name had it been served.
///
/// The gateway runs with `--rate-limit 0`, so that floods reach the transport rather than
/// the rate limiter, and the health checks after them are not refused as the flood's.
@Suite("Web edge: hostile HTTP/1.1 input against a real gateway")
struct WebEdgeHostileLiveTests {
    static let gatewayArguments = ["--rate-limit", "0"]
    /// What a refusal may answer: malformed (400), too large (413, 431), unsupported (501, 505).
    static let refusals: Set<Int> = [400, 413, 431, 501, 505]

    /// One smuggling attempt: a request the gateway must refuse, with a second request
    /// (`GET /smuggled-<name>`) hidden where a lenient reader would find it.
    struct SmugglingCase: Sendable, CustomStringConvertible {
        let name: String
        let bytes: [UInt8]
        var description: String { name }

        /// `head` (CRLF line ends, no blank line) then `body`, then the smuggled request unless
        /// `body` hides it itself.
        init(_ name: String, head: [String], body: String = "", bodyHidesIt: Bool = false) {
            self.name = name
            let hidden = bodyHidesIt ? "" : WebEdgeHostileLiveTests.smuggled(name)
            bytes = Array((head.joined(separator: "\r\n") + "\r\n\r\n" + body + hidden).utf8)
        }

        init(_ name: String, raw: String) {
            self.name = name
            bytes = Array((raw + WebEdgeHostileLiveTests.smuggled(name)).utf8)
        }
    }

    /// The request hidden in a case's bytes.
    static func smuggled(_ name: String) -> String { "GET /smuggled-\(name) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" }

    static let post = ["POST /healthz HTTP/1.1", "Host: 127.0.0.1"]
    static let chunkedPost = post + ["Transfer-Encoding: chunked"]

    /// A body whose chunk carries `0\r\n\r\n` plus the smuggled request, sized for a reader that
    /// ends the chunk-size line at the bare LF inside `2;\nxx` ("funky chunks"): that reader
    /// sees one request whose body holds the other; one that skips the LF as part of the
    /// extension reads the 2 bytes `3d` as the chunk, ends the body at `0\r\n\r\n` and then
    /// reads the smuggled request as a request of its own.
    static let extensionLineFeedBody: String = {
        let hidden = "0\r\n\r\n" + smuggled("chunk-ext-lf")
        return "2;\nxx\r\n" + String(hidden.utf8.count, radix: 16) + "\r\n" + hidden + "\r\n0\r\n\r\n"
    }()

    static let smugglingCases: [SmugglingCase] = [
        SmugglingCase("cl-te", head: post + ["Content-Length: 5", "Transfer-Encoding: chunked"], body: "0\r\n\r\n"),
        SmugglingCase("te-cl", head: chunkedPost + ["Content-Length: 5"], body: "0\r\n\r\n"),
        SmugglingCase("two-cl", head: post + ["Content-Length: 0", "Content-Length: 47"]),
        SmugglingCase("two-cl-same", head: post + ["Content-Length: 0", "Content-Length: 0"]),
        SmugglingCase("cl-list", head: post + ["Content-Length: 0, 0"]),
        SmugglingCase("cl-plus", head: post + ["Content-Length: +0"]),
        SmugglingCase("cl-overflow", head: post + ["Content-Length: 99999999999999999999999"]),
        SmugglingCase("cl-space-before-colon", head: post + ["Content-Length : 47"]),
        SmugglingCase("te-space-before-colon", head: post + ["Transfer-Encoding : chunked"], body: "0\r\n\r\n"),
        SmugglingCase("te-identity", head: post + ["Transfer-Encoding: identity", "Content-Length: 0"]),
        SmugglingCase("te-twice", head: chunkedPost + ["Transfer-Encoding: chunked"], body: "0\r\n\r\n"),
        SmugglingCase("te-list", head: post + ["Transfer-Encoding: gzip, chunked"], body: "0\r\n\r\n"),
        SmugglingCase("te-xchunked", head: post + ["Transfer-Encoding: xchunked"], body: "0\r\n\r\n"),
        // RFC 9112 §6.1: an HTTP/1.0 message with Transfer-Encoding has faulty framing; the
        // connection must close after it, so nothing after it may be read as a request.
        SmugglingCase("te-http10", head: ["POST /healthz HTTP/1.0", "Host: 127.0.0.1", "Transfer-Encoding: chunked", "Connection: keep-alive"], body: "0\r\n\r\n"),
        SmugglingCase("bare-lf", raw: "GET /healthz HTTP/1.1\nHost: 127.0.0.1\n\n"),
        SmugglingCase("bare-lf-in-header", raw: "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\nX-A: b\r\n\r\n"),
        SmugglingCase("bare-cr", raw: "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\rX-A: b\r\n\r\n"),
        SmugglingCase("nul", raw: "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\u{0}\r\n\r\n"),
        SmugglingCase("obs-fold", head: ["GET /healthz HTTP/1.1", "Host: 127.0.0.1", "X-A: a", " b"]),
        SmugglingCase("obs-fold-te", head: post + ["Transfer-Encoding:", " chunked", "Content-Length: 5"], body: "0\r\n\r\n"),
        SmugglingCase("chunk-size-overflow", head: chunkedPost, body: "FFFFFFFFFFFFFFFFFFFF\r\n"),
        SmugglingCase("chunk-size-4g", head: chunkedPost, body: "100000000\r\n"),
        SmugglingCase("chunk-size-5m", head: chunkedPost, body: "500000\r\n"),
        SmugglingCase("chunk-size-negative", head: chunkedPost, body: "-5\r\nhello\r\n0\r\n\r\n"),
        SmugglingCase("chunk-size-0x", head: chunkedPost, body: "0x5\r\nhello\r\n0\r\n\r\n"),
        // Chunks that lie about their size: longer than said, by 6 bytes and by 2 (twice: the
        // second with the last chunk right behind the 2 extra bytes, which a parser taking any
        // two bytes after a chunk's data as its CRLF would accept).
        SmugglingCase("chunk-longer", head: chunkedPost, body: "5\r\nhello world\r\n0\r\n\r\n"),
        SmugglingCase("chunk-longer-by-2", head: chunkedPost, body: "5\r\nhelloXX\r\n0\r\n\r\n"),
        SmugglingCase("chunk-data-without-crlf", head: chunkedPost, body: "5\r\nhelloXX0\r\n\r\n"),
        SmugglingCase("chunk-size-cr-without-lf", head: chunkedPost, body: "5\rXhello\r\n0\r\n\r\n"),
        SmugglingCase("chunk-ext-lf", head: chunkedPost, body: extensionLineFeedBody, bodyHidesIt: true),
        SmugglingCase("last-chunk-bare-lf", head: chunkedPost, body: "0\r\n\n"),
        SmugglingCase("trailer-bare-lf", head: chunkedPost, body: "0\r\nX-T: y\n\r\n"),
        SmugglingCase("trailer-obs-fold", head: chunkedPost, body: "0\r\nX-T: y\r\n z\r\n\r\n"),
        SmugglingCase("http09", raw: "GET /smuggled-http09-line\r\n\r\n"),
        SmugglingCase("http2-version", head: ["GET /healthz HTTP/2.0", "Host: 127.0.0.1"]),
    ]

    @Test("request smuggling is refused with one 4xx/5xx and a close, and nothing after it is read as a request")
    func smuggling() async throws {
        try await Self.withHostileGateway { stack in
            let port = try stack.service(.gateway).port
            var misread: [String] = []
            for probe in Self.smugglingCases {
                let outcome = try await Self.exchange(port, probe.bytes, expecting: 2, timeout: .seconds(2), awaitingClose: true)
                let statuses = outcome.responses.map(\.status)
                if statuses.count != 1 || !Self.refusals.contains(statuses[0]) || !outcome.closed {
                    misread.append("\(probe.name): \(statuses) closed=\(outcome.closed) for \(Self.visible(probe.bytes))")
                }
            }
            #expect(misread.isEmpty, "refused with anything but one 4xx/5xx and a close:\n\(misread.joined(separator: "\n"))")

            // A chunk longer than its bytes: what follows is body, so no answer comes yet and
            // the smuggled request is never read (the request deadline ends the connection).
            let short = Array((Self.chunkedPost.joined(separator: "\r\n") + "\r\n\r\n40\r\nhi\r\n0\r\n\r\n" + Self.smuggled("chunk-shorter")).utf8)
            let waiting = try await Self.exchange(port, short, expecting: 1, timeout: .seconds(1))
            #expect(waiting.responses.isEmpty && !waiting.closed, "a chunk still arriving: \(waiting.responses.map(\.status))")

            try await Self.expectStillServing(stack)
            try await Self.expectNothingSmuggled(stack)
        }
    }

    @Test("a head sent a byte at a time gets 408 within the 10 s head deadline and the connection closes; others are served meanwhile")
    func slowHeaders() async throws {
        try await Self.withHostileGateway { stack in
            let port = try stack.service(.gateway).port
            let socket = try WireSocket(port: port)
            let started = ContinuousClock.now
            async let fed: Void = onThread {
                _ = socket.send(Array("GET /smuggled-slow HTTP/1.1\r\n".utf8))
                // A byte every 250 ms for up to 14 s: never the blank line that ends the head.
                for byte in Array("Host: 127.0.0.1\r\nX-Slow: ".utf8) + Array(repeating: UInt8(ascii: "a"), count: 40) {
                    Thread.sleep(forTimeInterval: 0.25)
                    if !socket.send([byte]) || ContinuousClock.now - started > .seconds(14) { return }
                }
            }
            try await Task.sleep(for: .seconds(2))
            let (_, quick) = try await Self.timed { try await Self.expectStillServing(stack) }
            #expect(quick < .seconds(2), "the gateway took \(quick) to answer beside a slow head")

            var outcome = await onThread { socket.readResponses(count: 1, timeout: .seconds(14)) }
            let elapsed = ContinuousClock.now - started
            if !outcome.closed { outcome.closed = await onThread { socket.closes(within: .seconds(1)) } }
            await fed  // its next byte finds the connection closed
            socket.close()
            #expect(outcome.responses.map(\.status) == [408], "got \(outcome.responses.map(\.status)) after \(elapsed)")
            #expect(outcome.closed, "the connection stayed open after the 408")
            #expect(elapsed >= .seconds(9) && elapsed < .seconds(12.5), "408 after \(elapsed); the head deadline is 10 s")
            try await Self.expectStillServing(stack)
            try await Self.expectNothingSmuggled(stack)
        }
    }

    @Test("a flood of pipelined requests on one connection that reads no answer keeps the gateway's memory bounded", arguments: [
        FloodKind.health, FloodKind.getProduct,
    ])
    func pipelinedFlood(_ kind: FloodKind) async throws {
        try await Self.withHostileGateway { stack in
            let gateway = try stack.service(.gateway)
            try await Self.expectStillServing(stack)
            let before = try #require(Self.residentMiB(gateway.processIdentifier))
            let socket = try WireSocket(port: gateway.port)
            socket.shrinkReceiveBuffer()
            let request = kind.request
            let sent = await onThread { () -> Int in
                // Up to 50,000 requests in 1,000-request writes, for at most 20 s; a write the
                // gateway does not take within 2 s ends the flood (it stopped reading: fine).
                let batch = Array([[UInt8]](repeating: request, count: 1000).joined())
                let deadline = ContinuousClock.now + .seconds(20)
                var sent = 0
                while sent < 50_000, ContinuousClock.now < deadline, socket.send(batch, within: .seconds(2)) { sent += 1000 }
                return sent
            }
            try await Task.sleep(for: .seconds(2))
            let alive = gateway.isRunning
            let after = Self.residentMiB(gateway.processIdentifier)
            socket.close()
            #expect(alive, "the gateway died under \(sent) pipelined \(kind) requests:\n\(stack.logTail(of: .gateway))")
            if let after {
                #expect(after - before < 96, "resident memory grew from \(before) MiB to \(after) MiB under \(sent) pipelined \(kind) requests")
            }
            guard alive else { return }
            try await Self.expectStillServing(stack)
        }
    }

    /// What a pipelined flood asks for.
    enum FloodKind: String, Sendable, CustomStringConvertible {
        case health, getProduct
        var description: String { rawValue }
        var request: [UInt8] {
            switch self {
            case .health: Array("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
            case .getProduct: WebEdgeHostileLiveTests.connectRequest(body: #"{"id":1}"#)
            }
        }
    }

    @Test("10,000 tiny requests one after another on one keep-alive connection are all answered, and memory stays flat")
    func manyKeepAliveRequests() async throws {
        try await Self.withHostileGateway { stack in
            let gateway = try stack.service(.gateway)
            try await Self.expectStillServing(stack)
            let before = try #require(Self.residentMiB(gateway.processIdentifier))
            let socket = try WireSocket(port: gateway.port)
            let request = Array("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
            let (outcome, elapsed) = await Self.timed {
                await onThread { () -> (answered: Int, wrong: [String]) in
                    var answered = 0
                    var wrong: [String] = []
                    for index in 0..<10_000 {
                        guard socket.send(request) else { wrong.append("request \(index): the connection closed"); break }
                        let reply = socket.readResponses(count: 1, timeout: .seconds(5))
                        guard let response = reply.responses.first, response.status == 200, response.text == "ok\n", !reply.closed else {
                            wrong.append("request \(index): \(reply.responses.map(\.status)) closed=\(reply.closed)")
                            break
                        }
                        answered += 1
                    }
                    return (answered, wrong)
                }
            }
            // The same connection still serves the API.
            _ = socket.send(Self.connectRequest(body: #"{"id":2}"#))
            let product = await onThread { socket.readResponses(count: 1, timeout: .seconds(5)) }
            socket.close()
            let after = try #require(Self.residentMiB(gateway.processIdentifier))
            #expect(outcome.answered == 10_000, "\(outcome.answered) of 10,000 answered in \(elapsed): \(outcome.wrong)")
            #expect(product.responses.first?.status == 200 && product.responses.first?.text.contains(#""id":2"#) == true,
                    "GetProduct after 10,000 requests: \(product.responses.map(\.status))")
            #expect(after - before < 32, "resident memory grew from \(before) MiB to \(after) MiB over 10,000 requests")
            try await Self.expectStillServing(stack)
        }
    }

    @Test("a Connect body of 4 MiB + 1 is refused 413 (by Content-Length and chunked) and the connection closes; 4 MiB exactly is served")
    func oversizedConnectBody() async throws {
        try await Self.withHostileGateway { stack in
            let port = try stack.service(.gateway).port
            let limit = 4 * 1024 * 1024

            // By Content-Length: refused from the head, before any of the body is read; the
            // smuggled request right behind the head is never read.
            let head = Self.connectHead(extra: ["Content-Length: \(limit + 1)"])
            let byLength = try await Self.exchange(
                port, head + Array(Self.smuggled("over-limit").utf8), expecting: 2, timeout: .seconds(3), awaitingClose: true)
            #expect(byLength.responses.map(\.status) == [413] && byLength.closed, "by Content-Length: \(byLength.responses.map(\.status)) closed=\(byLength.closed)")

            // Chunked: 64 KiB chunks adding up to 4 MiB + 1.
            var chunked = Self.connectHead(extra: ["Transfer-Encoding: chunked"])
            let piece = [UInt8](repeating: UInt8(ascii: " "), count: 64 * 1024)
            var remaining = limit + 1
            while remaining > 0 {
                let size = min(piece.count, remaining)
                chunked += Array("\(String(size, radix: 16))\r\n".utf8) + piece[..<size] + Array("\r\n".utf8)
                remaining -= size
            }
            chunked += Array("0\r\n\r\n".utf8) + Array(Self.smuggled("over-limit-chunked").utf8)
            let byChunks = try await Self.exchange(port, chunked, expecting: 2, timeout: .seconds(5), awaitingClose: true)
            #expect(byChunks.responses.map(\.status) == [413] && byChunks.closed, "chunked: \(byChunks.responses.map(\.status)) closed=\(byChunks.closed)")

            // Exactly 4 MiB: within the limit; the unknown field is ignored.
            let prefix = #"{"id":1,"pad":""#
            let padding = String(repeating: "x", count: limit - prefix.utf8.count - 2)
            let atLimit = try await Self.exchange(port, Self.connectRequest(body: prefix + padding + #""}"#), expecting: 1, timeout: .seconds(10))
            #expect(atLimit.responses.first?.status == 200, "4 MiB exactly: \(atLimit.responses.map { "\($0.status) \($0.text.prefix(200))" })")

            try await Self.expectStillServing(stack)
            try await Self.expectNothingSmuggled(stack)
        }
    }

    @Test("header floods: too many fields, too many bytes, one huge field or target, a head that never ends, 100 connections holding 15 KiB heads")
    func headerFloods() async throws {
        try await Self.withHostileGateway { stack in
            let gateway = try stack.service(.gateway)
            let port = gateway.port
            let cases: [(name: String, head: [String], statuses: Set<Int>)] = [
                ("200 fields", (0..<200).map { "X-F\($0): v" }, [431]),
                ("17 KiB of fields", (0..<20).map { "X-F\($0): " + String(repeating: "v", count: 850) }, [431]),
                ("one 9 KiB field", ["X-Big: " + String(repeating: "v", count: 9 * 1024)], [400, 431]),
                ("one 9 KiB target", [], [400, 414]),
            ]
            var wrong: [String] = []
            for (name, fields, statuses) in cases {
                let target = name.contains("target") ? "/smuggled-long-" + String(repeating: "a", count: 9 * 1024) : "/healthz"
                let bytes = Array((["GET \(target) HTTP/1.1", "Host: 127.0.0.1"] + fields).joined(separator: "\r\n").utf8)
                    + Array("\r\n\r\n".utf8) + Array(Self.smuggled("after-flood").utf8)
                let outcome = try await Self.exchange(port, bytes, expecting: 2, timeout: .seconds(3), awaitingClose: true)
                let got = outcome.responses.map(\.status)
                if got.count != 1 || !statuses.contains(got[0]) || !outcome.closed { wrong.append("\(name): \(got) closed=\(outcome.closed)") }
            }
            // A head that never ends: 30 KiB of fields and no blank line.
            let endless = Array(("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n" + String(repeating: "X-Endless: vvvvvvvvvvvvvvvvvvvv\r\n", count: 1000)).utf8)
            let unended = try await Self.exchange(port, endless, expecting: 1, timeout: .seconds(3), awaitingClose: true)
            if unended.responses.map(\.status) != [431] || !unended.closed {
                wrong.append("30 KiB head without end: \(unended.responses.map(\.status)) closed=\(unended.closed)")
            }
            #expect(wrong.isEmpty, "\(wrong.joined(separator: "\n"))")

            // 100 connections each holding 15 KiB of a head that does not end yet.
            let before = try #require(Self.residentMiB(gateway.processIdentifier))
            let held = (["GET /healthz HTTP/1.1", "Host: 127.0.0.1"] + (0..<15).map { "X-H\($0): " + String(repeating: "v", count: 1000) })
                .joined(separator: "\r\n") + "\r\n"
            var holders: [WireSocket] = []
            for _ in 0..<100 {
                let socket = try WireSocket(port: port)
                #expect(socket.send(Array(held.utf8)))
                holders.append(socket)
            }
            try await Task.sleep(for: .milliseconds(500))
            let (_, latency) = try await Self.timed { try await Self.expectStillServing(stack) }
            let during = Self.residentMiB(gateway.processIdentifier)
            for socket in holders { socket.close() }
            #expect(latency < .seconds(2), "the gateway took \(latency) to answer beside 100 held heads")
            if let during { #expect(during - before < 48, "resident memory grew from \(before) to \(during) MiB with 100 held heads") }
            try await Self.expectStillServing(stack)
            try await Self.expectNothingSmuggled(stack)
        }
    }

    // MARK: Checks

    /// Runs `body` against the services behind a gateway with ``gatewayArguments``, once the
    /// gateway's `/healthz` says it is serving (it answers 503 until it has seen its upstreams).
    static func withHostileGateway(
        sourceLocation: SourceLocation = #_sourceLocation, _ body: (ServiceStack) async throws -> Void
    ) async throws {
        try await withLiveGateway(gatewayArguments: gatewayArguments, sourceLocation: sourceLocation) { stack in
            let port = try stack.service(.gateway).port
            let deadline = ContinuousClock.now + .seconds(15)
            var status: Int?
            while ContinuousClock.now < deadline {
                let health = try await exchange(port, Array("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8), expecting: 1, timeout: .seconds(2))
                status = health.responses.first?.status
                if status == 200 { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            try #require(status == 200, "the gateway's /healthz never said 200 (last: \(String(describing: status)))", sourceLocation: sourceLocation)
            try await body(stack)
        }
    }

    /// The gateway is running and answers, on new connections, `/healthz` and a Connect
    /// GetProduct (whose request id then marks the gateway's log up to here).
    static func expectStillServing(_ stack: ServiceStack, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let gateway = try stack.service(.gateway)
        try #require(gateway.isRunning, "the gateway is not running:\n\(stack.logTail(of: .gateway))", sourceLocation: sourceLocation)
        let health = try await exchange(gateway.port, Array("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8), expecting: 1, timeout: .seconds(5))
        #expect(health.responses.first?.status == 200 && health.responses.first?.text == "ok\n",
                "/healthz: \(health.responses.map { "\($0.status) \($0.text)" }) closed=\(health.closed)", sourceLocation: sourceLocation)
        // After a flood of answered calls their lines may still be queued, or dropped while
        // more than ServiceKit's LogSink bound waits: a few calls, each with its own id, until
        // one's line comes.
        var logged = false
        for _ in 0..<6 where !logged {
            let marker = "hostile-check-\(UUID().uuidString.prefix(8))"
            let product = try await exchange(
                gateway.port, connectRequest(body: #"{"id":1}"#, extra: ["X-Request-Id: \(marker)"]), expecting: 1, timeout: .seconds(5))
            #expect(product.responses.first?.status == 200 && product.responses.first?.text.contains(#""id":1"#) == true,
                    "GetProduct: \(product.responses.map { "\($0.status) \($0.text.prefix(200))" }) closed=\(product.closed)",
                    sourceLocation: sourceLocation)
            logged = await gateway.log.first(within: .seconds(5)) { $0.contains("request-id=\(marker)") ? true : nil } == true
        }
        #expect(logged, "no GetProduct's call line came", sourceLocation: sourceLocation)
    }

    /// No call line of the gateway names a `/smuggled-` path.
    static func expectNothingSmuggled(_ stack: ServiceStack, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let lines = try stack.service(.gateway).log.lines.filter { $0.contains("/smuggled-") }
        #expect(lines.isEmpty, "requests were read out of refused requests' bytes:\n\(lines.joined(separator: "\n"))", sourceLocation: sourceLocation)
    }

    // MARK: Requests and measurements

    /// The head of a Connect unary GetProduct, without its framing headers or blank line end.
    static func connectHead(extra: [String]) -> [UInt8] {
        Array((["POST /shop.catalog.v1.CatalogService/GetProduct HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/json"]
            + extra).joined(separator: "\r\n").utf8) + Array("\r\n\r\n".utf8)
    }

    /// A whole Connect unary GetProduct with `body`.
    static func connectRequest(body: String, extra: [String] = []) -> [UInt8] {
        connectHead(extra: extra + ["Content-Length: \(body.utf8.count)"]) + Array(body.utf8)
    }

    /// Sends `bytes` on a new connection and reads up to `count` answers, or until the gateway
    /// closes or `timeout` passes; then, with `awaitingClose`, gives the gateway 1 s more to
    /// close the connection.
    static func exchange(
        _ port: Int, _ bytes: [UInt8], expecting count: Int, timeout: Duration, awaitingClose: Bool = false
    ) async throws -> WireSocket.Outcome {
        let socket = try WireSocket(port: port)
        defer { socket.close() }
        return await onThread {
            // The gateway may refuse and close before taking all of a large request: what it
            // answered is still there to read.
            _ = socket.send(bytes, within: timeout)
            var outcome = socket.readResponses(count: count, timeout: timeout)
            if awaitingClose && !outcome.closed { outcome.closed = socket.closes(within: .seconds(1)) }
            return outcome
        }
    }

    /// What `body` returned and how long it took.
    static func timed<Value>(_ body: () async throws -> Value) async rethrows -> (Value, Duration) {
        let start = ContinuousClock.now
        let value = try await body()
        return (value, ContinuousClock.now - start)
    }

    /// `VmRSS` of process `pid` in MiB; nil when it is gone.
    static func residentMiB(_ pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
        return line.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") }.map { $0 / 1024 }
    }

    /// Bytes as a reader can see them: CR, LF and other controls escaped, at most 300.
    static func visible(_ bytes: [UInt8]) -> String {
        bytes.prefix(300).map { byte -> String in
            switch byte {
            case UInt8(ascii: "\r"): "\\r"
            case UInt8(ascii: "\n"): "\\n"
            case 0x20..<0x7F: String(UnicodeScalar(byte))
            default: String(format: "\\x%02x", byte)
            }
        }.joined() + (bytes.count > 300 ? "…(\(bytes.count) bytes)" : "")
    }
}

/// A blocking TCP connection to a loopback port that sends any bytes and reads HTTP/1.1
/// answers (content-length, chunked, or ended by the close), for requests no HTTP library
/// would send. Its calls block: run them through ``onThread(_:)``.
///
/// Sendable: the descriptor is atomic (``close()`` may come from another task); what has been
/// read lives behind a `Mutex`.
final class WireSocket: Sendable {
    /// One answer.
    struct Response: Sendable {
        var status: Int
        var headers: [(name: String, value: String)]
        var body: [UInt8]
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// The answers read, and whether the peer closed the connection.
    struct Outcome: Sendable {
        var responses: [Response]
        var closed: Bool
    }

    /// What has arrived and not yet been taken as an answer, and whether the peer closed.
    private struct Inbox {
        var received: [UInt8] = []
        var peerClosed = false
    }

    private let descriptor: Atomic<Int32>
    private let inbox = Mutex(Inbox())

    /// The socket, -1 once closed.
    private var fd: Int32 { descriptor.load(ordering: .acquiring) }

    init(port: Int) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw WireSocketError(function: "socket", errno: errno) }
        guard withLoopbackAddress(port: port, { connect(descriptor, $0, $1) }) == 0 else {
            let error = WireSocketError(function: "connect", errno: errno)
            Glibc.close(descriptor)
            throw error
        }
        self.descriptor = Atomic(descriptor)
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit { if fd >= 0 { Glibc.close(fd) } }

    /// A 4 KiB receive buffer, so that answers left unread back up into the gateway at once.
    func shrinkReceiveBuffer() {
        var size: Int32 = 4096
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Sends all of `bytes`; false when the peer closed, or took none of them for `within`.
    @discardableResult
    func send(_ bytes: [UInt8], within limit: Duration = .seconds(10)) -> Bool {
        var offset = 0
        var lastProgress = ContinuousClock.now
        while offset < bytes.count {
            var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            let ready = poll(&poller, 1, 100)
            if ready < 0 && errno != EINTR { return false }
            if ready <= 0 {
                if ContinuousClock.now - lastProgress > limit { return false }
                continue
            }
            let sent = bytes.withUnsafeBytes { buffer in
                Glibc.send(fd, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            }
            if sent < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                return false
            }
            offset += sent
            lastProgress = ContinuousClock.now
        }
        return true
    }

    /// Reads until `count` answers are whole (a 1xx does not count), the peer closes, or
    /// `timeout` passes. Answers left over stay for the next call.
    func readResponses(count: Int, timeout: Duration) -> Outcome {
        let deadline = ContinuousClock.now + timeout
        return inbox.withLock { inbox in
            var responses: [Response] = []
            while responses.count < count {
                if let response = Self.takeResponse(from: &inbox) {
                    if response.status >= 200 { responses.append(response) }
                    continue
                }
                guard !inbox.peerClosed, readMore(into: &inbox, until: deadline) else { break }
            }
            return Outcome(responses: responses, closed: inbox.peerClosed || (responses.count < count && pollClosed()))
        }
    }

    /// Whether the peer closes within `limit` (what else arrives is kept).
    func closes(within limit: Duration) -> Bool {
        let deadline = ContinuousClock.now + limit
        return inbox.withLock { inbox in
            while !inbox.peerClosed, readMore(into: &inbox, until: deadline) {}
            return inbox.peerClosed
        }
    }

    /// Whether the peer has closed, looking once without waiting.
    private func pollClosed() -> Bool {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, 0) > 0 else { return false }
        var byte: UInt8 = 0
        let count = recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        return count == 0 || (count < 0 && errno != EAGAIN)
    }

    /// Reads what arrives before `deadline`; false when nothing came in time.
    private func readMore(into inbox: inout Inbox, until deadline: ContinuousClock.Instant) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { return false }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let millis = Int32(max(1, min(1000, remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000)))
            let ready = poll(&poller, 1, millis)
            if ready < 0 && errno != EINTR { return false }
            if ready <= 0 { continue }
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                inbox.peerClosed = true  // a reset: the peer closed hard
                return true
            }
            if count == 0 {
                inbox.peerClosed = true
                return true
            }
            inbox.received.append(contentsOf: buffer[0..<count])
            return true
        }
    }

    /// Removes and returns the first whole answer in `inbox`, if there is one.
    private static func takeResponse(from inbox: inout Inbox) -> Response? {
        let terminator: [UInt8] = Array("\r\n\r\n".utf8)
        guard let headEnd = inbox.received.firstRange(of: terminator) else { return nil }
        let lines = String(decoding: inbox.received[..<headEnd.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let status = lines.first.flatMap { $0.split(separator: " ").dropFirst().first.flatMap { Int($0) } } ?? 0
        var headers: [(name: String, value: String)] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.append((line[..<colon].lowercased(), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        let bodyStart = headEnd.upperBound
        func header(_ name: String) -> String? { headers.first { $0.name == name }?.value }
        var body: [UInt8]
        var end: Int
        if status < 200 || status == 204 || status == 304 {
            (body, end) = ([], bodyStart)
        } else if let length = header("content-length").flatMap({ Int($0) }) {
            guard inbox.received.count - bodyStart >= length else { return nil }
            (body, end) = (Array(inbox.received[bodyStart..<bodyStart + length]), bodyStart + length)
        } else if header("transfer-encoding")?.lowercased() == "chunked" {
            guard let decoded = Self.dechunk(inbox.received, from: bodyStart) else { return nil }
            (body, end) = decoded
        } else {
            guard inbox.peerClosed else { return nil }  // ended by the close
            (body, end) = (Array(inbox.received[bodyStart...]), inbox.received.count)
        }
        inbox.received.removeFirst(end)
        return Response(status: status, headers: headers, body: body)
    }

    /// A chunked body starting at `start`: its bytes and where it ends, or nil when incomplete.
    private static func dechunk(_ bytes: [UInt8], from start: Int) -> (body: [UInt8], end: Int)? {
        var body: [UInt8] = []
        var index = start
        let crlf: [UInt8] = Array("\r\n".utf8)
        while true {
            guard let lineEnd = bytes[index...].firstRange(of: crlf) else { return nil }
            let sizeText = String(decoding: bytes[index..<lineEnd.lowerBound], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else { return nil }
            index = lineEnd.upperBound
            if size == 0 {
                // Trailers, if any, then the blank line.
                guard let end = bytes[index...].firstRange(of: crlf) else { return nil }
                if end.lowerBound == index { return (body, end.upperBound) }
                guard let trailersEnd = bytes[index...].firstRange(of: Array("\r\n\r\n".utf8)) else { return nil }
                return (body, trailersEnd.upperBound)
            }
            guard bytes.count >= index + size + 2 else { return nil }
            body += bytes[index..<index + size]
            index += size + 2
        }
    }

    /// Closes the socket; later calls do nothing.
    func close() {
        let open = descriptor.exchange(-1, ordering: .acquiringAndReleasing)
        if open >= 0 { Glibc.close(open) }
    }
}

/// A socket call of ``WireSocket`` that failed.
struct WireSocketError: Error, CustomStringConvertible {
    let function: String
    let errno: Int32
    var description: String { "\(function): \(String(cString: strerror(errno)))" }
}
