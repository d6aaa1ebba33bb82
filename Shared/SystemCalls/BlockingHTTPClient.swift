/// Why a ``BlockingHTTPClient`` request failed.
package enum BlockingHTTPError: Error, CustomStringConvertible {
    /// The URL is not `http://host[:port][/path]` (https and other schemes are not spoken).
    case badURL(String)
    /// Connecting, sending or receiving failed (refused, reset, a name that does not resolve).
    case connection(BlockingTCPError)
    /// The whole exchange did not finish within the request's timeout.
    case timedOut
    /// The response is larger than the limit the caller set; nothing past it was read.
    case responseTooLarge(limit: Int)
    /// The bytes received are not an HTTP/1.1 response; the reason says where they went wrong.
    case malformedResponse(String)
    /// The server closed the connection before the response's body was complete.
    case closedEarly

    /// A sentence for logs and error messages.
    package var description: String {
        switch self {
        case .badURL(let url): "not an http:// URL: \(url)"
        case .connection(let error): "\(error)"
        case .timedOut: "the request timed out"
        case .responseTooLarge(let limit): "the response is larger than \(limit) bytes"
        case .malformedResponse(let reason): "malformed HTTP response: \(reason)"
        case .closedEarly: "the server closed the connection before the response was complete"
        }
    }
}

/// An HTTP/1.1 response: status, headers (names in lower case, in the order received) and body.
package struct BlockingHTTPResponse: Sendable {
    /// The status code, `200`, `404`…
    package let status: Int
    /// The header fields, names lower-cased.
    package let headers: [(name: String, value: String)]
    /// The body, with any chunked transfer coding removed.
    package let body: [UInt8]

    /// The value of the first header named `name` (any case), nil when there is none.
    package func header(_ name: String) -> String? {
        let lowered = name.lowercased()
        return headers.first { $0.name == lowered }?.value
    }

    /// The body as UTF-8 text (invalid bytes replaced).
    package var text: String { String(decoding: body, as: UTF8.self) }
}

/// A small HTTP/1.1 client for code that runs on a thread of its own and may block: scrapers,
/// exporters and tests. One request per connection (`connection: close`), the whole exchange
/// bounded by a timeout and the response by a size limit, so neither a silent nor an endless
/// server can hang or exhaust the caller. Plain `http` only.
///
/// Stateless; each call uses its own connection, so calls may run on any threads at once.
package enum BlockingHTTPClient {
    /// The response size refused by default: far above any metrics page or API answer.
    package static let defaultResponseLimit = 16 << 20

    /// Sends `method url` with `headers` and `body`, and returns the response once complete.
    /// - Parameters:
    ///   - url: `http://host[:port][/path?query]`; `[::1]` for an IPv6 address.
    ///   - timeout: bounds the whole exchange, from resolving the host to the body's end.
    ///   - responseLimit: the most bytes (head and body) accepted before failing with
    ///     ``BlockingHTTPError/responseTooLarge(limit:)``.
    package static func request(
        method: String = "GET", url: String, headers: [(String, String)] = [], body: [UInt8] = [],
        timeout: Duration, responseLimit: Int = defaultResponseLimit
    ) throws(BlockingHTTPError) -> BlockingHTTPResponse {
        let target = try HTTPTarget(url: url)
        return try request(
            method: method, host: target.host, port: target.port, path: target.path, headers: headers, body: body,
            timeout: timeout, responseLimit: responseLimit)
    }

    /// Sends `method path` to `host:port` with `headers` and `body`, and returns the response
    /// once complete; see ``request(method:url:headers:body:timeout:responseLimit:)``.
    package static func request(
        method: String = "GET", host: String, port: Int, path: String, headers: [(String, String)] = [],
        body: [UInt8] = [], timeout: Duration, responseLimit: Int = defaultResponseLimit
    ) throws(BlockingHTTPError) -> BlockingHTTPResponse {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        let connection: BlockingTCPConnection
        do throws(BlockingTCPError) {
            connection = try BlockingTCPConnection(host: host, port: port, timeout: timeout)
        } catch {
            throw wrap(error)
        }
        defer { connection.close() }
        let head = requestHead(method: method, host: host, port: port, path: path, headers: headers, bodyCount: body.count)
        do throws(BlockingTCPError) {
            try connection.write(Array(head.utf8) + body, before: deadline)
        } catch {
            throw wrap(error)
        }
        var reader = HTTPResponseReader(connection: connection, deadline: deadline, limit: responseLimit)
        return try reader.readResponse(bodyAllowed: method != "HEAD")
    }

    /// The request line and header section. `content-length` is sent whenever there is a body
    /// or the method usually carries one, so a server never waits for a body that will not come.
    static func requestHead(
        method: String, host: String, port: Int, path: String, headers: [(String, String)], bodyCount: Int
    ) -> String {
        let hostField = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        var head = "\(method) \(path.isEmpty ? "/" : path) HTTP/1.1\r\nhost: \(hostField)\r\nconnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if bodyCount > 0 || ["POST", "PUT", "PATCH"].contains(method) { head += "content-length: \(bodyCount)\r\n" }
        return head + "\r\n"
    }

    /// A connection failure as the request's error: a timeout of any step is the request's.
    static func wrap(_ error: BlockingTCPError) -> BlockingHTTPError {
        if case .timedOut = error { return .timedOut }
        return .connection(error)
    }
}

/// Where an `http://` URL points: host, port (80 unless given) and the path with its query.
package struct HTTPTarget: Equatable {
    /// The host name or address, without brackets.
    package let host: String
    /// The port.
    package let port: Int
    /// The path and query, `/` when the URL has none.
    package let path: String

    /// Parses `url`; anything but `http://host[:port][/path]` is a ``BlockingHTTPError/badURL(_:)``.
    package init(url: String) throws(BlockingHTTPError) {
        guard url.lowercased().hasPrefix("http://") else { throw .badURL(url) }
        let rest = url.dropFirst("http://".count)
        let authority = rest.prefix { $0 != "/" && $0 != "?" }
        let pathPart = rest.dropFirst(authority.count)
        path = pathPart.isEmpty ? "/" : (pathPart.first == "?" ? "/" + pathPart : String(pathPart))
        let hostPart: Substring
        let portPart: Substring?
        if authority.first == "[" {
            guard let close = authority.firstIndex(of: "]") else { throw .badURL(url) }
            hostPart = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            guard after.isEmpty || after.first == ":" else { throw .badURL(url) }
            portPart = after.isEmpty ? nil : after.dropFirst()
        } else if let colon = authority.lastIndex(of: ":") {
            hostPart = authority[..<colon]
            portPart = authority[authority.index(after: colon)...]
        } else {
            hostPart = authority
            portPart = nil
        }
        guard !hostPart.isEmpty else { throw .badURL(url) }
        host = String(hostPart)
        if let portPart {
            guard let number = Int(portPart), (1...65535).contains(number) else { throw .badURL(url) }
            port = number
        } else {
            port = 80
        }
    }
}
