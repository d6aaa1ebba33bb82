internal import RPC
internal import CHTTPParser
internal import Foundation

/// The head of one HTTP/1.x request.
struct HTTP1RequestHead {
    var method = ""
    /// The request target as sent (`/path?query`).
    var target = ""
    var headers: [(name: String, value: String)] = []
    var major = 1, minor = 1
    /// Whether the connection stays open after this request (HTTP/1.1 without
    /// `connection: close`, HTTP/1.0 with `connection: keep-alive`).
    var keepAlive = true
    /// Whether the client asked to switch protocols (`upgrade`, `CONNECT`): not done here, so
    /// the connection closes after the answer rather than reading the other protocol's bytes.
    var upgrade = false
    /// Whether the client waits for `100 Continue` before sending its body.
    var expectsContinue = false
    /// Whether the body is chunked: the parser stops after the head, and the body is read by
    /// ``HTTP1ChunkedBody``, stricter than the library's lenient build.
    var chunked = false

    var version: String { "HTTP/\(major).\(minor)" }
}

/// What a round of parsing found.
enum HTTP1ParseEvent {
    /// Everything given was consumed; the request is not complete yet.
    case needMore
    /// A whole request.
    case complete(HTTP1RequestHead, body: Data)
    /// The request is refused with `status` (a 4xx or 501); the connection must close after
    /// the answer, since where this request ends — and the next begins — is not known.
    case failed(status: Int, message: String)
}

/// The bounds a request must keep (API.md §9: the same as on HTTP/2).
struct HTTP1RequestLimits {
    /// The request target's bytes; above: 400.
    var maxTarget = 8 * 1024
    /// One header's name and value; above: 400.
    var maxHeader = 8 * 1024
    /// The whole header list (name + value + 32 per field, as HTTP/2 counts it); above: 431.
    var maxHeaderList = 16 * 1024
    /// Header fields; above: 431.
    var maxHeaderCount = 128
    /// The body; above: 413.
    var maxBody = 4 * 1024 * 1024
}

/// An HTTP/1.x request parser: libhttp_parser (the parser Node.js used for years) behind our
/// own limits. The only file that sees the C library.
///
/// Fed with a connection's bytes, it stops after each complete request — returning how much
/// it consumed — so pipelined requests are taken one at a time and answered in order, and
/// after a refused request nothing that follows is read as a request of its own.
final class HTTP1Parser {
    /// The C parser's state, in memory of its own: its callbacks read and pause it while
    /// `http_parser_execute` runs, which an `inout` of a stored property would forbid.
    private let parser = UnsafeMutablePointer<http_parser>.allocate(capacity: 1)
    private let settings = UnsafeMutablePointer<http_parser_settings>.allocate(capacity: 1)
    let limits: HTTP1RequestLimits

    // The request being parsed.
    private var head = HTTP1RequestHead()
    private var body = Data()
    private var headerBytes = 0
    private var field: [UInt8] = []
    private var value: [UInt8] = []
    private var inValue = false
    private var target: [UInt8] = []
    private var completed = false
    private var failure: (status: Int, message: String)?

    init(limits: HTTP1RequestLimits) {
        self.limits = limits
        parser.initialize(to: http_parser())
        settings.initialize(to: http_parser_settings())
        http_parser_init(parser, HTTP_REQUEST)
        http_parser_settings_init(settings)
        settings.pointee.on_message_begin = { parser in HTTP1Parser.from(parser).messageBegan() }
        settings.pointee.on_url = { parser, at, length in HTTP1Parser.from(parser).url(at, length) }
        settings.pointee.on_header_field = { parser, at, length in HTTP1Parser.from(parser).headerField(at, length) }
        settings.pointee.on_header_value = { parser, at, length in HTTP1Parser.from(parser).headerValue(at, length) }
        settings.pointee.on_headers_complete = { parser in HTTP1Parser.from(parser).headersComplete() }
        settings.pointee.on_body = { parser, at, length in HTTP1Parser.from(parser).bodyPart(at, length) }
        settings.pointee.on_message_complete = { parser in HTTP1Parser.from(parser).messageComplete() }
        settings.pointee.on_chunk_header = { parser in HTTP1Parser.from(parser).chunkHeader() }
    }

    deinit {
        parser.deallocate()
        settings.deallocate()
    }

    private static func from(_ parser: UnsafeMutablePointer<http_parser>?) -> HTTP1Parser {
        Unmanaged<HTTP1Parser>.fromOpaque(parser!.pointee.data).takeUnretainedValue()
    }

    /// Whether the head of the request being parsed has arrived and asked for `100 Continue`
    /// (cleared when read).
    private(set) var continueWanted = false

    /// Takes the pending `100 Continue` request: true once per request that asked for one.
    func takeContinueWanted() -> Bool {
        defer { continueWanted = false }
        return continueWanted
    }

    /// Whether a request has begun and not yet completed.
    private(set) var inRequest = false

    /// Parses `bytes`; returns how many were consumed and what they completed. After a
    /// `.complete`, call again with the rest; after `.failed`, stop.
    func parse(_ bytes: UnsafeRawBufferPointer) -> (consumed: Int, event: HTTP1ParseEvent) {
        guard failure == nil else { return (0, .failed(status: failure!.status, message: failure!.message)) }
        // The C callbacks find this parser through `data`; unretained, as `self` outlives the
        // `http_parser_execute` call that uses it (C interop, not a speed choice).
        parser.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        let consumed = http_parser_execute(
            parser, settings, bytes.baseAddress?.assumingMemoryBound(to: CChar.self), bytes.count)
        parser.pointee.data = nil
        let errno = http_errno(rawValue: parser.pointee.http_errno)
        if let failure { return (consumed, .failed(status: failure.status, message: failure.message)) }
        if completed {
            completed = false
            http_parser_pause(parser, 0)
            let request = head
            let requestBody = body
            head = HTTP1RequestHead()
            body = Data()
            return (consumed, .complete(request, body: requestBody))
        }
        if errno != HPE_OK {
            let name = String(cString: http_errno_name(errno))
            let message = "Malformed HTTP request (\(name.hasPrefix("HPE_") ? String(name.dropFirst(4)) : name))."
            failure = (400, message)
            return (consumed, .failed(status: 400, message: message))
        }
        if parser.pointee.upgrade != 0 {
            // The parser stops at an upgrade's head (a CONNECT, or `upgrade` with no body it
            // would read): nothing here speaks the other protocol.
            failure = (400, "Protocol upgrades are not supported here.")
            return (consumed, .failed(status: 400, message: failure!.message))
        }
        return (consumed, .needMore)
    }

    // MARK: Callbacks

    private func fail(_ status: Int, _ message: String) -> Int32 {
        if failure == nil { failure = (status, message) }
        http_parser_pause(parser, 1)
        return 0
    }

    private func messageBegan() -> Int32 {
        inRequest = true
        headerBytes = 0
        field.removeAll(keepingCapacity: true)
        value.removeAll(keepingCapacity: true)
        target.removeAll(keepingCapacity: true)
        inValue = false
        return 0
    }

    private func url(_ at: UnsafePointer<CChar>?, _ length: Int) -> Int32 {
        guard target.count + length <= limits.maxTarget else {
            return fail(400, "The request target is longer than \(limits.maxTarget) bytes.")
        }
        target.append(contentsOf: UnsafeRawBufferPointer(start: at, count: length))
        return 0
    }

    private func headerField(_ at: UnsafePointer<CChar>?, _ length: Int) -> Int32 {
        if inValue {
            if let refused = storeHeader() { return refused }
            inValue = false
        }
        field.append(contentsOf: UnsafeRawBufferPointer(start: at, count: length))
        return field.count + value.count > limits.maxHeader ? headerTooLong() : 0
    }

    private func headerValue(_ at: UnsafePointer<CChar>?, _ length: Int) -> Int32 {
        inValue = true
        value.append(contentsOf: UnsafeRawBufferPointer(start: at, count: length))
        return field.count + value.count > limits.maxHeader ? headerTooLong() : 0
    }

    private func headerTooLong() -> Int32 {
        fail(400, "A header field is longer than \(limits.maxHeader) bytes.")
    }

    /// Stores the field just read; returns the refusal when the list is over its bounds.
    private func storeHeader() -> Int32? {
        headerBytes += field.count + value.count + 32
        guard headerBytes <= limits.maxHeaderList, head.headers.count < limits.maxHeaderCount else {
            return fail(431, "The request's header fields are larger than \(limits.maxHeaderList) bytes or more than \(limits.maxHeaderCount).")
        }
        // RFC 9110 §5.1: a field name is a token. The library's lenient build lets a space in,
        // which a stricter parser in front would read otherwise.
        guard !field.isEmpty, field.allSatisfy(Self.isTokenByte) else {
            return fail(400, "A header field name is not a token.")
        }
        // Lower-cased and trimmed on bytes: Strings' own (Unicode) versions cost more per header
        // than the rest of the parse.
        for index in field.indices where field[index] >= UInt8(ascii: "A") && field[index] <= UInt8(ascii: "Z") {
            field[index] |= 0x20
        }
        var end = value.count
        while end > 0, value[end - 1] == UInt8(ascii: " ") || value[end - 1] == UInt8(ascii: "\t") { end -= 1 }
        head.headers.append((String(decoding: field, as: UTF8.self), String(decoding: value[..<end], as: UTF8.self)))
        field.removeAll(keepingCapacity: true)
        value.removeAll(keepingCapacity: true)
        return nil
    }

    /// `tchar` of RFC 9110 §5.6.2.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }

    private func headersComplete() -> Int32 {
        if inValue {
            if let refused = storeHeader() { return refused }
            inValue = false
        }
        head.method = String(cString: http_method_str(http_method(rawValue: parser.pointee.method)))
        head.target = String(decoding: target, as: UTF8.self)
        head.major = Int(parser.pointee.http_major)
        head.minor = Int(parser.pointee.http_minor)
        head.keepAlive = http_should_keep_alive(parser) != 0
        head.upgrade = parser.pointee.upgrade != 0 || head.method == "CONNECT"
        guard head.major == 1 else { return fail(505, "Only HTTP/1.0 and HTTP/1.1 are spoken here (and HTTP/2 with prior knowledge).") }
        // Framing the parser leaves to us (RFC 9112 §6): one transfer coding, chunked; never
        // both a length and a coding, never two lengths — where a request ends must be beyond
        // doubt, or a proxy in front and this server could split the bytes differently.
        let codings = head.headers.filter { $0.name == "transfer-encoding" }
        let lengths = head.headers.filter { $0.name == "content-length" }
        if !codings.isEmpty {
            // RFC 9112 §6.1: an HTTP/1.0 message with a transfer coding has faulty framing.
            guard head.minor >= 1 else { return fail(400, "HTTP/1.0 requests may not use Transfer-Encoding.") }
            guard codings.count == 1, codings[0].value.lowercased() == "chunked" else {
                return fail(501, "Only the chunked transfer coding is supported.")
            }
            guard lengths.isEmpty else { return fail(400, "A request may not carry both Content-Length and Transfer-Encoding.") }
        }
        // RFC 9112 §3.2: exactly one Host in HTTP/1.1, at most one before.
        let hosts = head.headers.lazy.filter { $0.name == "host" }.count
        guard hosts <= 1, hosts == 1 || head.minor == 0 else {
            return fail(400, hosts == 0 ? "An HTTP/1.1 request must carry a Host header." : "A request may carry one Host header.")
        }
        guard lengths.count <= 1 else { return fail(400, "A request may carry one Content-Length.") }
        if let length = lengths.first {
            guard !length.value.isEmpty, length.value.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
                return fail(400, "Content-Length must be a number.")
            }
            guard parser.pointee.content_length <= UInt64(limits.maxBody) else {
                return fail(413, "The request body is larger than \(limits.maxBody) bytes.")
            }
        }
        let hasBody = !codings.isEmpty || (parser.pointee.content_length > 0 && !lengths.isEmpty)
        if hasBody, let expect = head.headers.first(where: { $0.name == "expect" }) {
            guard expect.value.lowercased() == "100-continue" else { return fail(417, "Only 'Expect: 100-continue' is supported.") }
            head.expectsContinue = true
            continueWanted = true
        }
        if !codings.isEmpty {
            head.chunked = true
            return 1  // the library skips the body: HTTP1ChunkedBody reads it
        }
        return 0
    }

    private func chunkHeader() -> Int32 {
        guard parser.pointee.content_length <= UInt64(limits.maxBody - body.count) else {
            return fail(413, "The request body is larger than \(limits.maxBody) bytes.")
        }
        return 0
    }

    private func bodyPart(_ at: UnsafePointer<CChar>?, _ length: Int) -> Int32 {
        guard body.count + length <= limits.maxBody else { return fail(413, "The request body is larger than \(limits.maxBody) bytes.") }
        body.append(UnsafeRawBufferPointer(start: at, count: length).assumingMemoryBound(to: UInt8.self))
        return 0
    }

    private func messageComplete() -> Int32 {
        completed = true
        inRequest = false
        http_parser_pause(parser, 1)
        return 0
    }
}

/// Checks a request head's bytes before the parser reads them, for what libhttp_parser
/// tolerates and we refuse (RFC 9112 §2.2, §5.2): a line ending in a bare LF, a bare CR,
/// a NUL, and obs-fold (a header line continued on the next one) — each a way for two
/// parsers to disagree on where a header, or a request, ends.
enum HTTP1HeadScanner {
    enum Outcome: Equatable {
        /// The head is not all here yet.
        case incomplete
        /// The head (with the blank line that ends it) is the first `length` bytes.
        case complete(length: Int)
        /// Refused: 400, or 431 when no end was found within `limit`.
        case invalid(status: Int, message: String)
    }

    /// Where a scan stopped, so that the next one (with more bytes) goes on from there: a head
    /// that arrives a byte at a time is read once, not once per byte.
    struct Progress {
        var index = 0
        var lineStart = 0
        var firstLine = true
        var pastLeadingLines = false
    }

    /// Scans `bytes` (from the start of a request; empty lines before it are allowed) for the
    /// end of its head, looking no further than `limit` bytes, and at a request line no longer
    /// than `lineLimit`; `progress` carries a scan over to the next call with more bytes.
    static func scan(_ bytes: UnsafeRawBufferPointer, limit: Int, lineLimit: Int, progress: inout Progress) -> Outcome {
        let cr = UInt8(ascii: "\r"), lf = UInt8(ascii: "\n")
        var index = progress.index
        if !progress.pastLeadingLines {
            // Leading empty lines (RFC 9112 §2.2: a server SHOULD ignore at least one).
            while index + 1 < bytes.count, bytes[index] == cr, bytes[index + 1] == lf { index += 2 }
            if index + 1 >= bytes.count && index < bytes.count && bytes[index] == cr {
                progress.index = index
                return .incomplete
            }
            guard index < bytes.count else {
                progress.index = index
                return .incomplete
            }
            progress.pastLeadingLines = true
            progress.lineStart = index
        }
        var lineStart = progress.lineStart
        var firstLine = progress.firstLine
        defer {
            progress.index = index
            progress.lineStart = lineStart
            progress.firstLine = firstLine
        }
        while index < bytes.count {
            if firstLine && index - lineStart > lineLimit {
                return .invalid(status: 400, message: "The request line is longer than \(lineLimit) bytes.")
            }
            if index >= limit {
                return .invalid(status: 431, message: "The request head is larger than \(limit) bytes.")
            }
            let byte = bytes[index]
            switch byte {
            case 0:
                return .invalid(status: 400, message: "The request head contains a NUL byte.")
            case lf:
                return .invalid(status: 400, message: "A line of the request head ends in a bare LF; use CRLF.")
            case cr:
                guard index + 1 < bytes.count else { return .incomplete }
                guard bytes[index + 1] == lf else { return .invalid(status: 400, message: "The request head contains a bare CR.") }
                if index == lineStart {
                    return firstLine ? .invalid(status: 400, message: "The request line is empty.") : .complete(length: index + 2)
                }
                index += 2
                lineStart = index
                firstLine = false
                continue
            case UInt8(ascii: " "), UInt8(ascii: "\t"):
                if index == lineStart && !firstLine {
                    return .invalid(status: 400, message: "Header lines may not be folded (obs-fold).")
                }
            default:
                break
            }
            index += 1
        }
        return .incomplete
    }
}

/// A chunked request body (RFC 9112 §7.1), read strictly: hex sizes of at most 15 digits,
/// extensions of visible characters only, exactly CRLF after each size line and each chunk's
/// data, trailer fields that are `token: value` lines with CRLF and no obs-fold. Anything else
/// is a 400 and the connection closes: a body a front end could frame otherwise must not
/// leave bytes here to be read as a request of its own. Trailer fields are read and dropped.
struct HTTP1ChunkedBody {
    enum Outcome: Equatable {
        /// Everything given was consumed; the body is not complete yet.
        case needMore
        /// The body (with its trailers and the blank line that ends them) is complete.
        case complete
        case failed(status: Int, message: String)
    }

    private enum State {
        case size, extensions, sizeLF, data, dataCR, dataLF, trailerStart, trailerName, trailerValue, trailerLF, endLF
    }

    private var state = State.size
    private var digits = 0
    private var size = 0
    /// Bytes of the current chunk still to come.
    private var remaining = 0
    private var lineBytes = 0
    private var trailerBytes = 0
    private(set) var body = Data()
    let maxBody: Int
    let maxTrailers: Int

    /// The longest size line (size, extensions) accepted.
    static let maxSizeLine = 1024

    init(maxBody: Int, maxTrailers: Int) {
        self.maxBody = maxBody
        self.maxTrailers = maxTrailers
    }

    /// Reads `bytes`; returns how many were consumed (all, unless the body completed or failed
    /// within them) and what they completed.
    mutating func feed(_ bytes: UnsafeRawBufferPointer) -> (consumed: Int, outcome: Outcome) {
        let cr = UInt8(ascii: "\r"), lf = UInt8(ascii: "\n")
        var index = 0
        func failed(_ status: Int, _ message: String) -> (Int, Outcome) { (index, .failed(status: status, message: message)) }
        while index < bytes.count {
            let byte = bytes[index]
            switch state {
            case .size:
                if let value = WebRequest.hexValue(byte) {
                    digits += 1
                    guard digits <= 15 else { return failed(400, "A chunk size has more than 15 digits.") }
                    size = size << 4 | Int(value)
                } else if digits > 0 && (byte == UInt8(ascii: ";") || byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")) {
                    state = .extensions
                } else if digits > 0 && byte == cr {
                    state = .sizeLF
                } else {
                    return failed(400, "A chunk size is not a hexadecimal number.")
                }
                lineBytes += 1
            case .extensions:
                // Visible characters, spaces and tabs: a chunk extension's every byte (RFC 9112
                // §7.1.1); a bare LF or any control ends nothing here, it refuses the body.
                if byte == cr {
                    state = .sizeLF
                } else if !(byte == UInt8(ascii: "\t") || (0x20...0x7e).contains(byte)) {
                    return failed(400, "A chunk extension contains a control character.")
                }
                lineBytes += 1
            case .sizeLF:
                guard byte == lf else { return failed(400, "A chunk size line does not end in CRLF.") }
                guard size <= maxBody - body.count else {
                    return failed(413, "The request body is larger than \(maxBody) bytes.")
                }
                remaining = size
                state = size == 0 ? .trailerStart : .data
                digits = 0
                size = 0
                lineBytes = 0
            case .data:
                let count = min(remaining, bytes.count - index)
                body.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[index..<(index + count)]))
                remaining -= count
                index += count
                if remaining == 0 { state = .dataCR }
                continue
            case .dataCR:
                guard byte == cr else { return failed(400, "A chunk's data is longer than its size.") }
                state = .dataLF
            case .dataLF:
                guard byte == lf else { return failed(400, "A chunk's data does not end in CRLF.") }
                state = .size
            case .trailerStart:
                if byte == cr {
                    state = .endLF
                } else if Self.isTokenByte(byte) {
                    state = .trailerName
                } else {
                    return failed(400, byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
                        ? "Trailer lines may not be folded (obs-fold)." : "A trailer field name is not a token.")
                }
            case .trailerName:
                if byte == UInt8(ascii: ":") {
                    state = .trailerValue
                } else if !Self.isTokenByte(byte) {
                    return failed(400, "A trailer field name is not a token.")
                }
            case .trailerValue:
                if byte == cr {
                    state = .trailerLF
                } else if byte == lf || byte == 0 || (byte < 0x20 && byte != UInt8(ascii: "\t")) || byte == 0x7f {
                    return failed(400, "A trailer field contains a control character or a bare LF.")
                }
            case .trailerLF:
                guard byte == lf else { return failed(400, "A trailer line does not end in CRLF.") }
                state = .trailerStart
            case .endLF:
                guard byte == lf else { return failed(400, "The chunked body does not end in CRLF.") }
                return (index + 1, .complete)
            }
            if lineBytes > Self.maxSizeLine { return failed(400, "A chunk size line is longer than \(Self.maxSizeLine) bytes.") }
            if state == .trailerName || state == .trailerValue || state == .trailerLF || state == .trailerStart || state == .endLF {
                trailerBytes += 1
                if trailerBytes > maxTrailers { return failed(431, "The request's trailer fields are larger than \(maxTrailers) bytes.") }
            }
            index += 1
        }
        return (index, .needMore)
    }

    private static func isTokenByte(_ byte: UInt8) -> Bool { HTTP1Parser.isTokenByte(byte) }
}
