public import Foundation

/// A request that is not a gRPC call — HTTP/1.1, or HTTP/2 with a content type other than
/// `application/grpc*` — handed whole (head and body) to the server's ``WebHandler``.
///
/// The transport has already applied the limits of API.md §9: the header list fits 16 KiB,
/// the body 4 MiB (the server's `maxMessageSize`), the request line and each header their own
/// bounds; what reaches a handler is well-formed HTTP.
public struct WebRequest: Sendable {
    /// `GET`, `POST`, `OPTIONS`, … as sent (upper case for every method HTTP defines).
    public var method: String
    /// The request target's path, before any `?`, still percent-encoded.
    public var path: String
    /// The query, after the `?` (without it), still percent-encoded; nil without a `?`.
    public var query: String?
    /// Every header, names lower-cased, in arrival order.
    public var headers: WebHeaders
    /// The whole body (empty when none was sent).
    public var body: Data
    /// `host:port` of the client.
    public var peer: String
    /// `HTTP/1.1`, `HTTP/1.0` or `HTTP/2`.
    public var version: String
    /// When the request's head had arrived.
    public var arrival: ContinuousClock.Instant

    public init(
        method: String, path: String, query: String?, headers: WebHeaders, body: Data, peer: String, version: String,
        arrival: ContinuousClock.Instant = .now
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.peer = peer
        self.version = version
        self.arrival = arrival
    }

    /// The value of query parameter `name` (first occurrence), percent- and `+`-decoded.
    public func queryValue(_ name: String) -> String? {
        query.flatMap { WebRequest.formFields($0)[name] }
    }

    /// Every query parameter, decoded, the first occurrence of a name winning.
    public var queryFields: [String: String] { query.map { WebRequest.formFields($0) } ?? [:] }

    /// The fields of `application/x-www-form-urlencoded` text (a query, a form's body),
    /// decoded; the first occurrence of a name wins.
    public static func formFields(_ text: some StringProtocol) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in text.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = formDecode(Substring(parts[0]))
            if fields[name] == nil { fields[name] = parts.count > 1 ? formDecode(Substring(parts[1])) : "" }
        }
        return fields
    }

    /// `application/x-www-form-urlencoded` decoding of one name or value: `+` is a space,
    /// `%XX` a byte; invalid escapes stay as they are, invalid UTF-8 is replaced.
    public static func formDecode(_ text: Substring) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = Array(text.utf8)[...]
        while let byte = iterator.popFirst() {
            if byte == UInt8(ascii: "+") {
                bytes.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%"), iterator.count >= 2,
                let high = hexValue(iterator[iterator.startIndex]), let low = hexValue(iterator[iterator.startIndex + 1])
            {
                bytes.append(high << 4 | low)
                iterator = iterator.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The value of a hexadecimal digit (either case); nil for any other byte.
    public static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// A request's or response's header fields: names lower-case, order kept, repeats allowed.
public struct WebHeaders: Sendable, Sequence, ExpressibleByDictionaryLiteral {
    public private(set) var fields: [(name: String, value: String)] = []

    public init() {}

    public init(_ fields: [(String, String)]) {
        for (name, value) in fields { add(name, value) }
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    /// The first value of `name` (any case).
    public subscript(name: String) -> String? {
        let lower = Self.lowercased(name)
        return fields.first { $0.name == lower }?.value
    }

    /// Every value of `name` (any case), in order.
    public func values(_ name: String) -> [String] {
        let lower = Self.lowercased(name)
        return fields.filter { $0.name == lower }.map(\.value)
    }

    /// Adds a field (the name is lower-cased).
    public mutating func add(_ name: String, _ value: String) {
        fields.append((Self.lowercased(name), value))
    }

    /// `name` lower-cased; as it is when it has no upper-case ASCII letter (names in code and
    /// from the transports are lower-case already, and `lowercased()` would copy every one).
    private static func lowercased(_ name: String) -> String {
        name.utf8.contains { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") } ? name.lowercased() : name
    }

    /// Replaces every field of `name` with one.
    public mutating func set(_ name: String, _ value: String) {
        let lower = Self.lowercased(name)
        fields.removeAll { $0.name == lower }
        fields.append((lower, value))
    }

    public var isEmpty: Bool { fields.isEmpty }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }
}

/// Where a ``WebHandler`` writes its answer to one request. Thread-safe: any method may be
/// called from any thread, once the handler has the response.
///
/// A response is either whole (``send(status:headers:body:)``), or streamed
/// (``start(status:headers:)``, any number of ``write(_:)``, then ``end()``); the transport
/// adds `content-length` or chunked framing (HTTP/1.1) or DATA frames (HTTP/2), `date`, and
/// `connection: close` when it closes after this response. The first of `send`, `start` counts;
/// a response never started by the time the handler's task ends is answered 500.
public protocol WebResponse: AnyObject, Sendable {
    /// Sends a complete response.
    func send(status: Int, headers: WebHeaders, body: Data)
    /// Sends the status and headers of a response whose body follows in parts.
    func start(status: Int, headers: WebHeaders)
    /// Sends one part of a started body; suspends while too much of it waits for the client to
    /// read (backpressure), and throws `CancellationError` once the client has gone.
    func write(_ bytes: Data) async throws
    /// Ends a started body.
    func end()
    /// Runs `action` (at once if it already happened) when the client goes away or the server
    /// gives up on the response before it ended: stop the work behind it.
    func onCancel(_ action: @escaping @Sendable () -> Void)
    /// Whether the client went away.
    var isCancelled: Bool { get }
    /// Runs `action` once, at `deadline`, unless the answer has ended by then (or the client
    /// went away): a call's deadline, on the transport's own timers — its loop's, as a gRPC
    /// call's — so nothing is held past the answer. The last deadline set counts.
    func setDeadline(_ deadline: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void)
    /// Notes what the request was as an RPC call, for its log line: the method path, the
    /// status it ended with (nil: OK) and its request id. Without it the line names the
    /// request's path (never its query, where tokens travel) and HTTP status.
    func noteCall(path: String, status: RPCError?, requestID: RequestID?)
    /// Notes that the request is a call of the method at `path` starting now, with its span
    /// (its context's ``ServerContext/trace``): counted as started from here (a watch is a call
    /// in flight for as long as it runs), and named by its log line's `trace-id` and `span-id`.
    func noteCallStarted(path: String, trace: TraceContext)
}

extension WebResponse {
    /// A response that writes no log line counts nothing and keeps no trace.
    public func noteCallStarted(path: String, trace: TraceContext) {}
}

/// Serves the requests of a server that are not gRPC calls (the gateway's web edge, a
/// service's `/metrics`).
public protocol WebHandler: Sendable {
    /// Serves one request. Called on the connection's loop thread: start the work (a task, a
    /// callback) and return at once; answer through `response` from any thread.
    func serve(_ request: WebRequest, response: any WebResponse)

    /// Whether an HTTP/2 request for `path` that is not a gRPC call is this handler's: those
    /// it declines are answered as a gRPC server answers them (405, 415). HTTP/1.1 requests
    /// all come to the handler. Default: every path.
    func serves(path: String) -> Bool
}

extension WebHandler {
    public func serves(path: String) -> Bool { true }
}
