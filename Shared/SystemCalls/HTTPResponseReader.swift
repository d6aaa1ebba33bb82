/// Reads one HTTP/1.1 response from a ``BlockingTCPConnection`` for ``BlockingHTTPClient``:
/// the status line and header fields, interim (1xx) responses skipped, then the body framed by
/// `transfer-encoding: chunked`, `content-length`, or the end of the connection
/// ([RFC 9112 §6.3](https://www.rfc-editor.org/rfc/rfc9112#section-6.3)).
///
/// Every read waits until one deadline at most, and no more than `limit` bytes are taken
/// from the connection in all. Not thread-safe: one request's thread owns it.
struct HTTPResponseReader {
    private let connection: BlockingTCPConnection
    private let deadline: ContinuousClock.Instant
    private let limit: Int
    /// Bytes received and not yet consumed start at ``start``.
    private var buffer: [UInt8] = []
    private var start = 0
    /// Bytes taken from the connection so far, for the limit.
    private var received = 0
    /// Whether the peer closed the connection.
    private var ended = false

    /// A reader of `connection`, finishing by `deadline`, taking at most `limit` bytes.
    init(connection: BlockingTCPConnection, deadline: ContinuousClock.Instant, limit: Int) {
        self.connection = connection
        self.deadline = deadline
        self.limit = limit
    }

    /// The response; `bodyAllowed` is false for an answer to `HEAD`, which has none whatever
    /// its headers say.
    mutating func readResponse(bodyAllowed: Bool) throws(BlockingHTTPError) -> BlockingHTTPResponse {
        while true {
            let (status, headers) = try readHead()
            if (100..<200).contains(status) && status != 101 { continue }  // 100 Continue and the like precede the answer
            let response = BlockingHTTPResponse(status: status, headers: headers, body: [])
            let hasBody = bodyAllowed && status >= 200 && status != 204 && status != 304
            return BlockingHTTPResponse(status: status, headers: headers, body: hasBody ? try readBody(of: response) : [])
        }
    }

    // MARK: Head

    /// The status line and the header fields up to the empty line.
    private mutating func readHead() throws(BlockingHTTPError) -> (Int, [(name: String, value: String)]) {
        let statusLine = try readLine()
        let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), parts[1].count == 3, let status = Int(parts[1]) else {
            throw .malformedResponse("status line '\(statusLine.prefix(80))'")
        }
        var headers: [(name: String, value: String)] = []
        while true {
            let line = try readLine()
            if line.isEmpty { return (status, headers) }
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex else {
                throw .malformedResponse("header line '\(line.prefix(80))'")
            }
            let value = line[line.index(after: colon)...].trimmingSpaces
            headers.append((name: line[..<colon].lowercased(), value: String(value)))
        }
    }

    // MARK: Body

    /// The body of `response` by its framing.
    private mutating func readBody(of response: BlockingHTTPResponse) throws(BlockingHTTPError) -> [UInt8] {
        if let coding = response.header("transfer-encoding"), coding.lowercased().hasSuffix("chunked") {
            return try readChunkedBody()
        }
        let lengths = Set(response.headers.filter { $0.name == "content-length" }.map(\.value))
        if lengths.count > 1 { throw .malformedResponse("content-length given as \(lengths.sorted())") }
        if let text = lengths.first {
            guard let length = Int(text), length >= 0 else { throw .malformedResponse("content-length '\(text)'") }
            // Refused before it is read: a declared length past the limit cannot fit.
            guard length <= limit - received + (buffer.count - start) else { throw .responseTooLarge(limit: limit) }
            return try readExactly(length)
        }
        while try fill() {}  // no framing: the body ends with the connection
        return take(buffer.count - start)
    }

    /// A `transfer-encoding: chunked` body: chunks of a hexadecimal size line (extensions
    /// ignored) and data, a zero-size chunk, then trailer fields (ignored) up to an empty line.
    private mutating func readChunkedBody() throws(BlockingHTTPError) -> [UInt8] {
        var body: [UInt8] = []
        while true {
            let sizeLine = try readLine()
            let digits = sizeLine.prefix { $0 != ";" }.trimmingSpaces
            guard !digits.isEmpty, let size = Int(digits, radix: 16), size >= 0 else {
                throw .malformedResponse("chunk size '\(sizeLine.prefix(40))'")
            }
            if size == 0 { break }
            body += try readExactly(size)
            guard try readLine().isEmpty else { throw .malformedResponse("chunk data longer than its size \(size)") }
        }
        while try !readLine().isEmpty {}
        return body
    }

    // MARK: Bytes

    /// The next line, without its line feed and any carriage return before it.
    private mutating func readLine() throws(BlockingHTTPError) -> String {
        var scanned = 0  // bytes after `start` known to hold no line feed (`fill` may move `start`)
        while true {
            if let newline = buffer[(start + scanned)...].firstIndex(of: 10) {
                var line = take(newline - start + 1)
                line.removeLast()
                if line.last == 13 { line.removeLast() }
                return String(decoding: line, as: UTF8.self)
            }
            scanned = buffer.count - start
            guard try fill() else { throw .closedEarly }
        }
    }

    /// Exactly the next `count` bytes.
    private mutating func readExactly(_ count: Int) throws(BlockingHTTPError) -> [UInt8] {
        while buffer.count - start < count {
            guard try fill() else { throw .closedEarly }
        }
        return take(count)
    }

    /// The next `count` buffered bytes, consumed.
    private mutating func take(_ count: Int) -> [UInt8] {
        let bytes = Array(buffer[start..<(start + count)])
        start += count
        return bytes
    }

    /// Reads more bytes into the buffer; false once the peer has closed. Reads at most one
    /// byte past the limit, enough to tell that the response exceeds it.
    private mutating func fill() throws(BlockingHTTPError) -> Bool {
        guard !ended else { return false }
        if start > 0 {
            buffer.removeFirst(start)
            start = 0
        }
        let bytes: [UInt8]
        do throws(BlockingTCPError) {
            bytes = try connection.read(atMost: min(65_536, limit - received + 1), before: deadline)
        } catch {
            throw BlockingHTTPClient.wrap(error)
        }
        if bytes.isEmpty {
            ended = true
            return false
        }
        received += bytes.count
        guard received <= limit else { throw .responseTooLarge(limit: limit) }
        buffer += bytes
        return true
    }
}

extension Substring {
    /// The text without leading and trailing spaces and tabs (HTTP's optional white space).
    fileprivate var trimmingSpaces: Substring {
        let isSpace = { (character: Character) in character == " " || character == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return self[first...last]
    }
}
