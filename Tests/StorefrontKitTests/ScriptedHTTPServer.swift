import Foundation
import ServiceTestSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A plain HTTP/1.1 server on 127.0.0.1 that answers each request with the next of its
/// scripted answers (the last one again once they run out) and records every request: what a
/// gateway answering an error, or a redirect, looks like to ``ConnectTransport``, without a
/// gateway. One request a connection (`connection: close`), served one at a time on a thread
/// of its own, so it never blocks the cooperative pool.
///
/// Thread-safe: the script and the record live behind a lock.
final class ScriptedHTTPServer: Sendable {
    /// One scripted answer.
    struct Answer: Sendable {
        /// The HTTP status.
        var status: Int
        /// Headers besides `content-length` and `connection`.
        var headers: [(name: String, value: String)] = [("content-type", "application/json")]
        /// The body.
        var body: String
    }

    /// One request as it arrived.
    struct Request: Sendable {
        /// The method, e.g. `POST`.
        let method: String
        /// The path, e.g. `/shop.catalog.v1.CatalogService/GetProduct`.
        let path: String
        /// The headers, names lowercased.
        let headers: [String: String]
    }

    private struct State {
        var answers: [Answer]
        var requests: [Request] = []
        var stopped = false
        var finished = false
    }

    /// The port it listens on.
    let port: Int
    private let descriptor: Int32
    private let state: Mutex<State>

    /// Listens on a free port and answers with `answers`, in order.
    init(answering answers: [Answer]) throws {
        precondition(!answers.isEmpty, "a server needs an answer")
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        port = try ListeningSocket.listenOnLoopback(descriptor)
        self.descriptor = descriptor
        state = Mutex(State(answers: answers))
        Thread { [self] in serve() }.start()
    }

    /// The base URL a client of this server uses.
    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// Every request so far, in order.
    var requests: [Request] { state.withLock { $0.requests } }

    /// Stops serving and closes the listening socket.
    func stop() async {
        state.withLock { $0.stopped = true }
        let deadline = ContinuousClock.now + .seconds(1)
        while !state.withLock({ $0.finished }) && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        close(descriptor)
    }

    /// Accepts connections until stopped, answering one request on each.
    private func serve() {
        while !state.withLock({ $0.stopped }) {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 20) > 0 else { continue }
            let connection = accept(descriptor, nil, nil)
            guard connection >= 0 else { continue }
            if let request = Self.readRequest(from: connection) {
                let answer = state.withLock { state in
                    state.requests.append(request)
                    return state.answers.count > 1 ? state.answers.removeFirst() : state.answers[0]
                }
                Self.write(answer, to: connection)
            }
            close(connection)
        }
        state.withLock { $0.finished = true }
    }

    /// Reads one request — its head, and as much body as `content-length` says — within 5 s;
    /// nil when the peer closed or fell silent first.
    private static func readRequest(from connection: Int32) -> Request? {
        var bytes: [UInt8] = []
        let deadline = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < deadline {
            if let request = request(in: bytes) { return request }
            var poller = pollfd(fd: connection, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 50) >= 0 else { return nil }
            guard poller.revents != 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 16 * 1024)
            let count = recv(connection, &chunk, chunk.count, 0)
            guard count > 0 else { return nil }
            bytes += chunk[..<count]
        }
        return nil
    }

    /// The request in `bytes` once its head and whole body are there.
    private static func request(in bytes: [UInt8]) -> Request? {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        guard let headEnd = (0..<max(0, bytes.count - 3)).first(where: { Array(bytes[$0..<$0 + 4]) == separator }) else { return nil }
        let lines = String(decoding: bytes[..<headEnd], as: UTF8.self).components(separatedBy: "\r\n")
        let requestLine = lines[0].split(separator: " ")
        guard requestLine.count >= 2 else { return nil }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let bodyLength = Int(headers["content-length"] ?? "0") ?? 0
        guard bytes.count - (headEnd + 4) >= bodyLength else { return nil }
        return Request(method: String(requestLine[0]), path: String(requestLine[1]), headers: headers)
    }

    /// Writes `answer` as a whole HTTP/1.1 response.
    private static func write(_ answer: Answer, to connection: Int32) {
        let body = Array(answer.body.utf8)
        var head = "HTTP/1.1 \(answer.status) Scripted\r\n"
        for (name, value) in answer.headers { head += "\(name): \(value)\r\n" }
        head += "content-length: \(body.count)\r\nconnection: close\r\n\r\n"
        let bytes = Array(head.utf8) + body
        var offset = 0
        while offset < bytes.count {
            // C interop, not a speed choice (no benchmark): send(2) takes a buffer's address.
            let sent = bytes.withUnsafeBytes { buffer in
                send(connection, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
            }
            guard sent > 0 else { return }
            offset += sent
        }
    }
}
