import SystemCalls
import Testing

/// The blocking HTTP/1.1 client against a one-connection loopback server scripted per test.
@Suite("BlockingHTTPClient: framing, limits and timeouts")
struct BlockingHTTPClientTests {
    /// Requests `path` from a server answering with `pieces`, on a thread of its own.
    private func exchange(
        _ behaviour: OneShotHTTPServer.Behaviour, method: String = "GET", path: String = "/metrics", body: String = "",
        timeout: Duration = .seconds(5), responseLimit: Int = BlockingHTTPClient.defaultResponseLimit
    ) async throws -> (result: Result<BlockingHTTPResponse, BlockingHTTPError>, request: String?, elapsed: Duration) {
        let server = try OneShotHTTPServer(behaviour)
        let url = "http://127.0.0.1:\(server.port)\(path)"
        // Timed on the request's own thread: the test's wait for the thread may be held up by
        // a busy cooperative pool, the request may not.
        let (result, elapsed) = try await BlockingThread {
            let started = ContinuousClock.now
            let result = Result { () throws(BlockingHTTPError) in
                try BlockingHTTPClient.request(
                    method: method, url: url, headers: [("accept", "text/plain")], body: Array(body.utf8), timeout: timeout,
                    responseLimit: responseLimit)
            }
            return (result, ContinuousClock.now - started)
        }.result()
        return (result, try? await server.request(), elapsed)
    }

    @Test("a content-length response: status, headers and body; the request names host, path and connection: close")
    func contentLength() async throws {
        let (result, request, _) = try await exchange(
            .answer(["HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 11\r\n\r\nhello", " world"]),
            path: "/metrics?x=1")
        let response = try result.get()
        #expect(response.status == 200)
        #expect(response.header("content-type") == "text/plain")
        #expect(response.header("Content-Length") == "11")
        #expect(response.text == "hello world")
        let lines = try #require(request).split(separator: "\r\n").map(String.init)
        #expect(lines.first == "GET /metrics?x=1 HTTP/1.1")
        #expect(lines.contains { $0.hasPrefix("host: 127.0.0.1:") })
        #expect(lines.contains("connection: close"))
        #expect(lines.contains("accept: text/plain"))
    }

    @Test("a chunked response arriving in pieces is joined, extensions and trailers ignored")
    func chunked() async throws {
        let (result, _, _) = try await exchange(
            .answer([
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;name=value\r\nhel",
                "lo\r\n1", "0\r\n0123456789abcdef\r\n0\r\nx-trailer: 1\r\n\r\n",
            ]))
        let response = try result.get()
        #expect(response.text == "hello0123456789abcdef")
    }

    @Test("with neither length nor chunks, the body runs to the connection's end")
    func untilClose() async throws {
        let (result, _, _) = try await exchange(.answer(["HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nfirst ", "second"]))
        #expect(try result.get().text == "first second")
    }

    @Test("an interim 100 Continue is skipped; a POST sends its body with its length")
    func postAndInterimResponse() async throws {
        let (result, request, _) = try await exchange(
            .answer(["HTTP/1.1 100 Continue\r\n\r\n", "HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok"]), method: "POST",
            path: "/v1/traces", body: "{\"a\":1}")
        let response = try result.get()
        #expect(response.status == 201)
        #expect(response.text == "ok")
        let received = try #require(request)
        #expect(received.hasPrefix("POST /v1/traces HTTP/1.1\r\n"))
        #expect(received.contains("content-length: 7\r\n"))
        #expect(received.hasSuffix("\r\n\r\n{\"a\":1}"))
    }

    @Test("a 204 has no body whatever follows it")
    func noContent() async throws {
        let (result, _, _) = try await exchange(.answer(["HTTP/1.1 204 No Content\r\n\r\n"]))
        let response = try result.get()
        #expect(response.status == 204)
        #expect(response.body.isEmpty)
    }

    @Test(
        "a response larger than the limit is refused",
        arguments: [
            "HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n" + String(repeating: "x", count: 5000),
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + String(repeating: "100\r\n" + String(repeating: "y", count: 256) + "\r\n", count: 20)
                + "0\r\n\r\n",
            "HTTP/1.1 200 OK\r\n\r\n" + String(repeating: "z", count: 5000),
        ])
    func oversized(answer: String) async throws {
        let (result, _, _) = try await exchange(.answer([answer]), responseLimit: 1024)
        guard case .failure(.responseTooLarge(let limit)) = result else {
            Issue.record("expected responseTooLarge, got \(result)")
            return
        }
        #expect(limit == 1024)
        #expect(BlockingHTTPError.responseTooLarge(limit: 1024).description == "the response is larger than 1024 bytes")
    }

    @Test("a response exactly at the limit is taken")
    func atTheLimit() async throws {
        let head = "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n"
        let (result, _, _) = try await exchange(
            .answer([head + String(repeating: "a", count: 100)]), responseLimit: head.utf8.count + 100)
        #expect(try result.get().body.count == 100)
    }

    @Test("a server that never answers fails the request once its timeout has passed")
    func silentServer() async throws {
        let (result, request, elapsed) = try await exchange(.silent, timeout: .milliseconds(300))
        guard case .failure(.timedOut) = result else {
            Issue.record("expected timedOut, got \(result)")
            return
        }
        #expect(request != nil)
        #expect(elapsed >= .milliseconds(300))
        #expect(elapsed < .seconds(3))
    }

    @Test("a server that trickles its answer is bound by the same one timeout, not a timeout per read")
    func tricklingServer() async throws {
        let pieces = ["HTTP/1.1 200 OK\r\nContent-Length: 200\r\n\r\n"] + Array(repeating: "x", count: 200)
        let (result, _, elapsed) = try await exchange(.answer(pieces), timeout: .milliseconds(300))
        guard case .failure(.timedOut) = result else {
            Issue.record("expected timedOut, got \(result)")
            return
        }
        // The answer takes at least 4 s to trickle in (20 ms between bytes); a timeout per read
        // would wait for all of it.
        #expect(elapsed < .seconds(3))
    }

    @Test("a body cut short by the server's close is an error, not a short body")
    func closedEarly() async throws {
        let (result, _, _) = try await exchange(.answer(["HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"]))
        guard case .failure(.closedEarly) = result else {
            Issue.record("expected closedEarly, got \(result)")
            return
        }
    }

    @Test(
        "what is not an HTTP/1.1 response is refused, naming what is wrong",
        arguments: [
            ("SSH-2.0-OpenSSH_9.6\r\n\r\n", "status line"),
            ("HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", "header line"),
            ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "chunk size"),
            ("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", "content-length"),
        ])
    func malformed(answer: String, named: String) async throws {
        let (result, _, _) = try await exchange(.answer([answer]))
        guard case .failure(.malformedResponse(let reason)) = result else {
            Issue.record("expected malformedResponse, got \(result)")
            return
        }
        #expect(reason.contains(named))
    }

    @Test("only http:// URLs are taken, and a refused connection is a connection error")
    func urlsAndRefusal() throws {
        for url in ["https://127.0.0.1/", "127.0.0.1:80/metrics", "http://:80/", "http://host:99999/", "http://[::1/"] {
            let error = #expect(throws: BlockingHTTPError.self, "\(url)") {
                try BlockingHTTPClient.request(url: url, timeout: .seconds(1))
            }
            guard case .badURL(url)? = error else {
                Issue.record("\(url): expected badURL, got \(String(describing: error))")
                continue
            }
        }
        // Port 1 on loopback: nothing of ours listens there, and connecting is refused at once.
        let error = #expect(throws: BlockingHTTPError.self) {
            try BlockingHTTPClient.request(host: "127.0.0.1", port: 1, path: "/", timeout: .seconds(2))
        }
        guard case .connection? = error else {
            Issue.record("expected a connection error, got \(String(describing: error))")
            return
        }
    }
}
