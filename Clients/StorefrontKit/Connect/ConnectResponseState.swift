import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import RPC

/// The state of one ``ConnectCall``: what was sent, what has arrived, and who waits. Its event
/// methods change it and return the ``ConnectWakeUps`` the call performs once the lock is let
/// go — the state machine knows no threads, so it is tested without a server.
///
/// Not thread-safe by itself: the call keeps it behind a lock.
struct ConnectResponseState {
    /// Whether the call streams: the body is envelopes, not one message.
    let streaming: Bool
    /// The largest message accepted (a unary body, a stream's envelope).
    let maxMessageSize: Int
    /// The most bytes of a stream's messages kept unread: a reader that falls further behind
    /// ends the call (`RESOURCE_EXHAUSTED`) instead of letting the backlog grow without bound.
    /// One message is always kept, however large.
    let maxUnreadBytes: Int

    /// Request messages kept until the request is sent.
    var requests: [Data] = []
    /// Whether the request was sent (no more messages).
    var sendingFinished = false
    /// The URL task once started.
    var task: URLSessionDataTask?
    /// What ends the call at its deadline, cancelled when it ends first.
    var deadlineTimer: Task<Void, Never>?

    /// The response headers, once the head arrived.
    private(set) var headers: Metadata?
    /// The response's HTTP status, once the head arrived.
    private(set) var httpStatus = 0
    /// Whether the server began a successful answer (an HTTP 200 head): what a retry must not
    /// follow. Any other status is a Connect error answer, a status without response headers.
    var answerBegan: Bool { headers != nil && httpStatus == 200 }
    /// A unary body, or the body of a stream refused at the HTTP level.
    private var body = Data()
    /// A stream's envelopes, split as they come.
    private var envelopes: ConnectEnvelopeReader
    /// Messages received and not yet read.
    private var messages: [Data] = []
    /// The bytes of ``messages``.
    private var unreadBytes = 0
    /// How the call ended: nil while open.
    private(set) var status: Result<Void, RPCError>?

    /// The reader suspended in `nextMessage()`.
    var reader: CheckedContinuation<Data?, any Error>?
    /// Callers suspended in `responseHeaders()`.
    var headerWaiters: [CheckedContinuation<Metadata, any Error>] = []

    /// The most bytes of an error body kept (a proxy's HTML page need not be kept whole).
    static let maxErrorBodySize = 64 * 1024

    /// The state of a call that has sent nothing.
    init(streaming: Bool, maxMessageSize: Int, maxUnreadBytes: Int = 4 * 1024 * 1024) {
        self.streaming = streaming
        self.maxMessageSize = maxMessageSize
        self.maxUnreadBytes = maxUnreadBytes
        envelopes = ConnectEnvelopeReader(maxMessageSize: maxMessageSize)
    }

    /// The next message, or the end (nil: success) once every message was read; nil while
    /// the reader must wait.
    mutating func takeMessage() -> Result<Data?, RPCError>? {
        if !messages.isEmpty {
            let message = messages.removeFirst()
            unreadBytes -= message.count
            return .success(message)
        }
        switch status {
        case .success?: return .success(nil)
        case .failure(let error)?: return .failure(error)
        case nil: return nil
        }
    }

    // MARK: Events

    /// The response head arrived: the headers are known, and their waiters wake.
    mutating func receive(head response: HTTPURLResponse) -> ConnectWakeUps {
        var received = Metadata()
        for (name, value) in response.allHeaderFields {
            if let name = name as? String, let value = value as? String { received.add(name.lowercased(), value) }
        }
        headers = received
        httpStatus = response.statusCode
        var wakeUps = ConnectWakeUps()
        wakeUps.headerWaiters = (headerWaiters, received)
        headerWaiters = []
        return wakeUps
    }

    /// Body bytes arrived; `failed` when they broke the call (the URL task is then cancelled).
    mutating func receive(body data: Data) -> (ConnectWakeUps, failed: Bool) {
        guard status == nil else { return (ConnectWakeUps(), false) }
        guard streaming, httpStatus == 200 else {
            let limit = httpStatus == 200 ? maxMessageSize : Self.maxErrorBodySize
            guard body.count + data.count <= limit else {
                guard httpStatus == 200 else { return (ConnectWakeUps(), false) }  // the error's start is enough
                return (end(.failure(Self.tooLarge(limit: limit))), true)
            }
            body.append(data)
            return (ConnectWakeUps(), false)
        }
        do {
            var wakeUps = ConnectWakeUps()
            for envelope in try envelopes.append(data) {
                switch envelope {
                case .message(let message):
                    messages.append(message)
                    unreadBytes += message.count
                case .endOfStream(let payload):
                    let ended = ConnectErrorDecoding.endOfStreamStatus(payload)
                    return (end(ended.map { .failure($0) } ?? .success(())), false)
                }
            }
            if let reader, let next = takeMessage() {
                self.reader = nil
                wakeUps.reader = (reader, next)
            }
            guard unreadBytes <= maxUnreadBytes || messages.count <= 1 else {
                // The backlog goes: the reader learns of the failure next, not after it.
                messages.removeAll()
                unreadBytes = 0
                var ended = end(.failure(Self.readerBehind(limit: maxUnreadBytes)))
                ended.reader = wakeUps.reader ?? ended.reader
                return (ended, true)
            }
            return (wakeUps, false)
        } catch {
            return (end(.failure(error)), true)
        }
    }

    /// The URL task completed (`error` when it failed): the call ends with what arrived.
    mutating func complete(error: (any Error)?, transportClosed: Bool) -> ConnectWakeUps {
        guard status == nil else { return ConnectWakeUps() }
        if let error {
            return end(.failure(Self.transferError(error, transportClosed: transportClosed)))
        }
        if (300..<400).contains(httpStatus) {
            return end(.failure(ConnectErrorDecoding.redirectError(httpStatus: httpStatus, location: headers?["location"])))
        }
        guard httpStatus == 200 else {
            let reason = headers?[RPCError.Trailer.reason]
            return end(.failure(ConnectErrorDecoding.unaryError(httpStatus: httpStatus, body: body, reasonHeader: reason)))
        }
        guard !streaming else {
            return end(.failure(RPCError(code: .internal, message: "The stream ended without its end-of-stream message.")))
        }
        messages.append(body)
        return end(.success(()))
    }

    /// Ends the call with `outcome` unless it has ended: the reader and header waiters wake,
    /// and the deadline timer stops.
    mutating func end(_ outcome: Result<Void, RPCError>) -> ConnectWakeUps {
        guard status == nil else { return ConnectWakeUps() }
        status = outcome
        var wakeUps = ConnectWakeUps()
        if let reader, let next = takeMessage() {
            self.reader = nil
            wakeUps.reader = (reader, next)
        }
        wakeUps.headerWaiters = (headerWaiters, headers ?? Metadata())
        headerWaiters = []
        wakeUps.deadlineTimer = deadlineTimer
        deadlineTimer = nil
        return wakeUps
    }

    // MARK: Errors

    /// The error of a transfer that failed: `UNAVAILABLE` (retryable; the server may never
    /// have seen the call) unless the client was closed or the task cancelled.
    static func transferError(_ error: any Error, transportClosed: Bool) -> RPCError {
        if transportClosed { return RPCError(code: .unavailable, message: "The client is closed.", cause: error) }
        if let urlError = error as? URLError, urlError.code == .cancelled { return RPCError.callCancelled.causedBy(error) }
        return RPCError(code: .unavailable, message: "The server could not be reached: \(error.localizedDescription)", cause: error)
    }

    /// A stream whose reader left more than `limit` bytes of messages unread.
    static func readerBehind(limit: Int) -> RPCError {
        RPCError(code: .resourceExhausted, message: "The stream's reader fell more than \(limit) bytes behind.")
    }

    /// A response message over the limit.
    static func tooLarge(limit: Int) -> RPCError {
        RPCError(code: .resourceExhausted, reason: "MESSAGE_TOO_LARGE", message: "The server's message exceeds \(limit) bytes.")
    }
}

/// What a ``ConnectCall`` does after a state change, outside its lock: resume the suspended
/// reader and header waiters, stop the deadline timer.
struct ConnectWakeUps {
    /// The reader to resume, with its message or the end.
    var reader: (CheckedContinuation<Data?, any Error>, Result<Data?, RPCError>)?
    /// The header waiters to resume, with the headers.
    var headerWaiters: ([CheckedContinuation<Metadata, any Error>], Metadata)?
    /// The deadline timer to cancel.
    var deadlineTimer: Task<Void, Never>?

    /// Resumes and cancels what it holds.
    func perform() {
        if let (reader, next) = reader { reader.resume(with: next.mapError { $0 as any Error }) }
        if let (waiters, headers) = headerWaiters {
            for waiter in waiters { waiter.resume(returning: headers) }
        }
        deadlineTimer?.cancel()
    }
}
