internal import RPC

/// The life cycle of a ``ServerStream``, as a value: its request's headers arriving, its body
/// arriving, its request ended, closed — and beside that path, which the answer does not
/// follow, whether its handler has started (counting among its loop's open calls), whether its
/// response has been submitted, and why the server reset it. Each event returns what the
/// connection must do; the connection does it (nghttp2, the loop's counts, the handler), so
/// every transition is testable without a socket.
///
/// Loop only, as the stream's other loop-side fields. How the answer ends (`finished`, its
/// trailers) is not here: handlers set it from any thread, so it stays in the stream's
/// Mutex-protected ``ServerStream/Shared``.
struct ServerStreamStateMachine {
    /// Where the stream is in its life, as its request goes (HTTP/2's open, half-closed
    /// (remote), closed; RFC 9113 §5.1).
    enum State: Equatable {
        /// The request's HEADERS block is arriving: its fields are stored.
        case receivingHeaders
        /// The request's headers are complete (the call admitted or answered): its body arrives.
        case receivingBody
        /// The request has ended (END_STREAM): nothing more comes from the client.
        case requestEnded
        /// nghttp2 closed the stream, or its connection closed: nothing more happens on it.
        case closed
    }

    /// Where the stream's handler (a call's, or the ``WebHandler``'s) is.
    enum Handler: Equatable {
        /// Not started: the call is not admitted yet, waits for its request, or failed first.
        case notStarted
        /// Started; `countedOpen` while it counts among its loop's open unary calls
        /// (``EventLoop/openCalls``), which it does until the stream closes.
        case started(countedOpen: Bool)
    }

    /// Where the stream's response is.
    enum Response {
        /// No response headers submitted yet.
        case pending
        /// The response headers are submitted: nghttp2 reads their bytes uncopied until the
        /// frame is sent, so the stream keeps them alive.
        case submitted(holding: HTTP2HeaderBlock)
    }

    /// What to do when a stream has new output (its handler wrote or finished, or freed window).
    enum PushAction: Equatable {
        /// Nothing: the stream has closed.
        case none
        /// Submit the response headers, if the answer has begun; then grant freed window.
        case submitResponse
        /// Resume the body nghttp2 deferred; then grant freed window.
        case resumeBody
    }

    /// Where the stream is in its life.
    private(set) var state = State.receivingHeaders
    /// Where its handler is.
    private(set) var handler = Handler.notStarted
    /// Where its response is.
    private(set) var response = Response.pending
    /// Why the server reset the stream before its answer was all sent (its deadline, the send
    /// timeout, headers nghttp2 could not send): the status its log line gives.
    private(set) var resetReason: RPCError?

    /// The status of a stream whose answer's headers nghttp2 could not send (it resets it).
    static let headersNotSent = RPCError(code: .internal, message: "The answer's headers could not be sent.")

    // MARK: The request

    /// Whether header fields are stored: only the request's first HEADERS block counts; a
    /// later one (trailers) is ignored.
    var isReceivingHeaders: Bool { state == .receivingHeaders }

    /// A HEADERS block ended. Returns whether to admit the call: the request's headers are now
    /// complete (false for trailers, or any block after the first).
    mutating func headerBlockEnded() -> Bool {
        guard state == .receivingHeaders else { return false }
        state = .receivingBody
        return true
    }

    /// Whether the request's body is arriving: its headers are complete and it has not ended.
    var isReceivingBody: Bool { state == .receivingBody }

    /// Whether nothing more comes from the client: its request ended, or the stream closed.
    var isRequestEnded: Bool { state == .requestEnded || state == .closed }

    /// The request ended (END_STREAM on HEADERS or DATA). Returns whether this ended it: false
    /// when it had ended already, or the stream closed.
    ///
    /// From ``State/receivingHeaders`` too, though nghttp2 reports a HEADERS block complete
    /// before any frame after it: once END_STREAM is in, it lets no HEADERS block follow, so no
    /// admission is skipped.
    mutating func requestEnded() -> Bool {
        switch state {
        case .receivingHeaders, .receivingBody:
            state = .requestEnded
            return true
        case .requestEnded, .closed:
            return false
        }
    }

    // MARK: The handler

    /// Whether the stream's handler has started.
    var handlerStarted: Bool { handler != .notStarted }

    /// The handler starts; `countedOpen`: it counts among its loop's open calls (the caller
    /// counts it) until the stream closes.
    mutating func handlerStarts(countedOpen: Bool) {
        assert(
            handler == .notStarted,
            "a handler starts once: at admission (a streamed request, a web request) or as its request ends, not both")
        handler = .started(countedOpen: countedOpen)
    }

    // MARK: The response

    /// Whether the response headers have been submitted.
    var isResponseSubmitted: Bool {
        if case .submitted = response { return true }
        return false
    }

    /// What to do with the stream's new output.
    var pushAction: PushAction {
        if state == .closed { return .none }
        return isResponseSubmitted ? .resumeBody : .submitResponse
    }

    /// The response headers were submitted; the stream holds `headers` for nghttp2 to read.
    mutating func responseSubmitted(holding headers: HTTP2HeaderBlock) {
        assert(state != .closed, "a closed stream pushes nothing (pushAction), and admission answers a live one")
        assert(
            !isResponseSubmitted,
            "a response is submitted once: a push checks pushAction first, admission answers before any push")
        response = .submitted(holding: headers)
    }

    /// A frame with END_STREAM went out: the response is complete. Returns whether to tell the
    /// client to stop sending, without error (RST_STREAM NO_ERROR; RFC 9113 §8.1): its request
    /// is still arriving.
    func responseEnded() -> Bool {
        !isRequestEnded
    }

    // MARK: Resets and closing

    /// The server resets the stream (RST_STREAM CANCEL) because of `reason`, which its log
    /// line gives; the latest reason counts.
    mutating func serverResets(because reason: RPCError) {
        resetReason = reason
    }

    /// nghttp2 could not send the answer's headers and resets the stream: its log line says so,
    /// unless the server had reset it for a reason already.
    mutating func answerHeadersNotSent() {
        if resetReason == nil { resetReason = Self.headersNotSent }
    }

    /// The stream closes: nghttp2 closed it, or its connection closed. Returns whether its call
    /// is to be taken off its loop's open calls (counted since its handler started); closing
    /// again returns false.
    mutating func close() -> Bool {
        state = .closed
        guard handler == .started(countedOpen: true) else { return false }
        handler = .started(countedOpen: false)
        return true
    }

    /// Whether the stream has closed.
    var isClosed: Bool { state == .closed }
}
