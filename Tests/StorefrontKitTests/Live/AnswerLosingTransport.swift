import Foundation
import RPC
import Synchronization

/// A transport that loses the first answer of one method: that call goes to the server and
/// its whole answer is read, then the caller is told `UNAVAILABLE` with no response header
/// seen — what a connection lost just before the answer arrived looks like, and what
/// ``RPCClient`` retries. Every other call passes through. Thread-safe.
final class AnswerLosingTransport: ClientTransport {
    private let inner: any ClientTransport
    private let path: String
    private let lost = Mutex(0)

    /// `inner`, losing the first answer to a call of `path`.
    init(_ inner: any ClientTransport, losingFirstAnswerOf path: String) {
        self.inner = inner
        self.path = path
    }

    /// How many answers were lost (0 or 1).
    var lostAnswers: Int { lost.withLock { $0 } }

    /// Starts the call on `inner`; the first of `path` loses its answer.
    func startCall(path: String, options: CallOptions, prepare: (any ClientCall) -> Void) throws(RPCError) -> any ClientCall {
        let call = try inner.startCall(path: path, options: options, prepare: prepare)
        let loses = path == self.path && lost.withLock { count in
            defer { count = 1 }
            return count == 0
        }
        return loses ? AnswerLosingCall(call) : call
    }

    /// Whether `inner` is closed.
    var isClosed: Bool { inner.isClosed }

    /// Closes `inner`.
    func close() async { await inner.close() }
}

/// A call whose answer is read to its end and then reported lost (see ``AnswerLosingTransport``).
final class AnswerLosingCall: ClientCall {
    private let inner: any ClientCall

    /// `inner`, its answer lost.
    init(_ inner: any ClientCall) { self.inner = inner }

    /// The method path.
    var path: String { inner.path }
    /// Sends on `inner`.
    func send(_ message: Data) async throws { try await inner.send(message) }
    /// Half-closes `inner`.
    func finishSending() { inner.finishSending() }

    /// Reads `inner` to its end — the server has answered — then fails as a lost connection.
    func nextMessage() async throws -> Data? {
        while try await inner.nextMessage() != nil {}
        throw RPCError(code: .unavailable, message: "The connection was lost before the answer arrived.")
    }

    /// Never arrive.
    func responseHeaders() async throws -> Metadata {
        _ = try await nextMessage()
        return Metadata()
    }

    /// None seen.
    var hasResponseHeaders: Bool { false }
    /// Not as far as the caller knows.
    var serverAnswered: Bool { false }
    /// Cancels `inner`.
    func cancel() { inner.cancel() }
}
