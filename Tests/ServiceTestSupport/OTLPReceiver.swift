import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A small OTLP/HTTP JSON collector on 127.0.0.1 for the span exporter's tests: it keeps every
/// request it is sent and answers each with the status its test sets (200 unless told), or —
/// while ``hold()`` is in force — not at all until ``release()``, as a stalled collector would.
/// One connection at a time, closed after the answer (the exporter's client sends one request
/// per connection). ``spans()`` reads the spans out of every body received.
///
/// Stops (and closes its socket) when released or on ``stop()``. Thread-safe.
package final class OTLPReceiver: Sendable {
    /// One request as received.
    package struct Request: Sendable {
        /// The request line's target, `/v1/traces`.
        package let path: String
        /// Its `content-type`, when it sent one.
        package let contentType: String?
        /// Its body.
        package let body: [UInt8]
    }

    /// One span as the collector read it, with the `service.name` of its resource.
    package struct Span: Sendable, CustomStringConvertible {
        /// The resource's `service.name`.
        package let service: String
        /// `traceId`, `spanId`, `parentSpanId` as sent (hexadecimal text); the parent nil when absent or empty.
        package let traceID: String
        package let spanID: String
        package let parentSpanID: String?
        /// `name`.
        package let name: String
        /// `kind`: 2 server, 3 client.
        package let kind: Int
        /// `startTimeUnixNano` and `endTimeUnixNano` as sent.
        package let start: String
        package let end: String
        /// `traceState`, when sent.
        package let traceState: String?
        /// Every attribute's value as text (an `intValue` in decimal).
        package let attributes: [String: String]
        /// `status.code`, when a status was sent.
        package let statusCode: Int?

        package var description: String {
            "\(service) \(kind == 2 ? "server" : "client") \(name) span \(spanID) parent \(parentSpanID ?? "-")"
        }
    }

    /// The port it listens on.
    package let port: Int
    private let shared: Shared

    /// The base endpoint to give an exporter: `http://127.0.0.1:<port>`.
    package var endpoint: String { "http://127.0.0.1:\(port)" }

    /// What the serving thread shares with the receiver; the socket closes when both let go.
    private final class Shared: Sendable {
        let listener: Int32
        let state = Mutex(State())

        init(listener: Int32) { self.listener = listener }

        deinit { close(listener) }
    }

    /// The requests and how to answer.
    private struct State {
        var requests: [Request] = []
        var status = 200
        var holding = false
        /// Requests received and not yet answered because of ``hold()``.
        var held = 0
        var stopped = false
    }

    /// Starts listening and answering.
    package init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        port = try ListeningSocket.listenOnLoopback(listener, backlog: 16)
        let shared = Shared(listener: listener)
        self.shared = shared
        Thread { Self.serve(shared) }.start()
    }

    deinit { stop() }

    /// Answers every request from now on with `status`.
    package func answer(status: Int) { shared.state.withLock { $0.status = status } }

    /// Leaves requests unanswered, from the next one received, until ``release()``.
    package func hold() { shared.state.withLock { $0.holding = true } }

    /// Answers the requests held and those that follow.
    package func release() { shared.state.withLock { $0.holding = false } }

    /// How many requests are received and held unanswered now.
    package var heldCount: Int { shared.state.withLock { $0.held } }

    /// Every request received, in order.
    package var requests: [Request] { shared.state.withLock { $0.requests } }

    /// Stops accepting (the thread's `accept` fails at once) and answers what it holds.
    package func stop() {
        let first = shared.state.withLock { state in
            defer { state.stopped = true }
            return !state.stopped
        }
        if first { shutdown(shared.listener, Int32(SHUT_RDWR)) }
    }

    /// The spans of every request received, in order; throws when a body is not OTLP JSON.
    package func spans() throws -> [Span] {
        try requests.flatMap { try Self.spans(in: $0.body) }
    }

    /// The spans received once `complete` says they are all there, polling until `limit`
    /// passes; then what has come, whatever `complete` says.
    package func spans(within limit: Duration, until complete: ([Span]) -> Bool) async throws -> [Span] {
        let deadline = ContinuousClock.now + limit
        while true {
            let spans = try spans()
            if complete(spans) || ContinuousClock.now >= deadline { return spans }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    // MARK: Reading spans

    /// The spans of one `ExportTraceServiceRequest` in JSON.
    package static func spans(in body: [UInt8]) throws -> [Span] {
        guard let root = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
            let resources = root["resourceSpans"] as? [[String: Any]]
        else { throw POSIXError(.EBADMSG) }
        return resources.flatMap { resource -> [Span] in
            let resourceAttributes = (resource["resource"] as? [String: Any])?["attributes"] as? [[String: Any]] ?? []
            let service = attributes(resourceAttributes)["service.name"] ?? ""
            let scopes = resource["scopeSpans"] as? [[String: Any]] ?? []
            return scopes.flatMap { scope in
                (scope["spans"] as? [[String: Any]] ?? []).map { span(from: $0, service: service) }
            }
        }
    }

    /// One span object.
    private static func span(from object: [String: Any], service: String) -> Span {
        let parent = object["parentSpanId"] as? String
        return Span(
            service: service, traceID: object["traceId"] as? String ?? "", spanID: object["spanId"] as? String ?? "",
            parentSpanID: parent?.isEmpty == false ? parent : nil, name: object["name"] as? String ?? "",
            kind: object["kind"] as? Int ?? 0, start: object["startTimeUnixNano"] as? String ?? "",
            end: object["endTimeUnixNano"] as? String ?? "", traceState: object["traceState"] as? String,
            attributes: attributes(object["attributes"] as? [[String: Any]] ?? []),
            statusCode: (object["status"] as? [String: Any])?["code"] as? Int)
    }

    /// `KeyValue`s as text: a `stringValue` as is, an `intValue` (string or number) in decimal.
    private static func attributes(_ list: [[String: Any]]) -> [String: String] {
        var result: [String: String] = [:]
        for entry in list {
            guard let key = entry["key"] as? String, let value = entry["value"] as? [String: Any] else { continue }
            if let text = value["stringValue"] as? String {
                result[key] = text
            } else if let number = value["intValue"] {
                result[key] = "\(number)"
            }
        }
        return result
    }

    // MARK: Serving

    /// Accepts, reads and answers until stopped.
    private static func serve(_ shared: Shared) {
        while !shared.state.withLock({ $0.stopped }) {
            let connection = accept(shared.listener, nil, nil)
            guard connection >= 0 else { return }
            limitWaits(of: connection)
            if let request = readRequest(connection) {
                let status = shared.state.withLock { state in
                    state.requests.append(request)
                    if state.holding { state.held += 1 }
                    return state.status
                }
                waitWhileHeld(shared)
                let head = "HTTP/1.1 \(status) Fixture\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}"
                let bytes = Array(head.utf8)
                _ = bytes.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            }
            close(connection)
        }
    }

    /// Returns once the receiver stops holding (or stops), counting the request as answered.
    private static func waitWhileHeld(_ shared: Shared) {
        while shared.state.withLock({ $0.holding && !$0.stopped && $0.held > 0 }) { usleep(5_000) }
        shared.state.withLock { $0.held = 0 }
    }

    /// The request on `connection`: its head, then as many body bytes as its `content-length`
    /// says; nil when the client goes before sending it all.
    private static func readRequest(_ connection: Int32) -> Request? {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        let separator = Array("\r\n\r\n".utf8)
        var headEnd: Int?
        var wanted = Int.max
        while received.count < wanted {
            let count = recv(connection, &buffer, buffer.count, 0)
            guard count > 0 else { return nil }
            received += buffer[..<count]
            if headEnd == nil, let end = firstIndex(of: separator, in: received) {
                headEnd = end + separator.count
                wanted = end + separator.count + (header("content-length", in: received[..<end]).flatMap { Int($0) } ?? 0)
            }
        }
        guard let headEnd else { return nil }
        let head = received[..<headEnd]
        let requestLine = String(decoding: head.prefix { $0 != UInt8(ascii: "\r") }, as: UTF8.self).split(separator: " ")
        return Request(
            path: requestLine.count > 1 ? String(requestLine[1]) : "", contentType: header("content-type", in: head),
            body: Array(received[headEnd...]))
    }

    /// The value of the header `name` (lower case) in a request head.
    private static func header(_ name: String, in head: ArraySlice<UInt8>) -> String? {
        for line in String(decoding: head, as: UTF8.self).split(separator: "\r\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == name { return parts[1].trimmingCharacters(in: .whitespaces) }
        }
        return nil
    }

    /// Where `pattern` first starts in `bytes`.
    private static func firstIndex(of pattern: [UInt8], in bytes: [UInt8]) -> Int? {
        guard bytes.count >= pattern.count else { return nil }
        return (0...(bytes.count - pattern.count)).first { bytes[$0..<($0 + pattern.count)].elementsEqual(pattern) }
    }

    /// Bounds every blocking read of `descriptor` to 30 s (a client that connects and sends nothing).
    private static func limitWaits(of descriptor: Int32) {
        var limit = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    }
}
