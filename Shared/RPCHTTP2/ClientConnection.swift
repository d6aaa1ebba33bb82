internal import Foundation
internal import Logging
internal import RPC
internal import Synchronization
internal import SystemCalls
internal import Telemetry

/// One HTTP/2 connection to an upstream, multiplexing calls. Lives on one event loop;
/// ``submit(_:)``, ``scheduleFlush(_:)`` and ``reset(_:)`` may be called from any thread.
final class ClientConnection: EventHandler, HTTP2SessionDelegate, SocketOwner, @unchecked Sendable {
    // Invariant for @unchecked Sendable: loop-confined state is touched only on `loop`;
    // `pending` and `status` are behind Mutexes.

    let loop: EventLoop
    private let target: SocketAddressText
    private let configuration: ClientConfiguration
    private let resolver: HostResolver
    private let onClose: @Sendable (ClientConnection, _ connected: Bool) -> Void
    private var socket: HTTP2Socket?
    private var session: HTTP2Session!
    private var calls = StreamMap<HTTP2ClientCall>()
    /// Calls submitted before the connection was made, started once it is; their number is
    /// kept in the client's `rpc_client_calls_waiting` gauge, when it has one (with the calls
    /// waiting for a stream slot, ``HTTP2ClientCall/awaitsStreamSlot``).
    private var waiting: [HTTP2ClientCall] = [] {
        didSet {
            guard let gauge = configuration.metrics?.callsWaiting, waiting.count != waitingCounted else { return }
            gauge.add(Int64(waiting.count - waitingCounted))
            waitingCounted = waiting.count
        }
    }
    /// How many of ``waiting`` the gauge counts.
    private var waitingCounted = 0
    /// The connection's life cycle: connecting, ready, retiring, closed, and its PINGs.
    private var lifecycle: ClientConnectionStateMachine
    private var keepaliveTimer: UInt64?
    private let pending = Mutex<(calls: [HTTP2ClientCall], scheduled: Bool)>(([], false))
    /// Whether new calls may use this connection (false after GOAWAY or close).
    let isUsable = Atomic<Bool>(true)
    /// Calls given this connection and not yet ended on it: reserved by the client as it hands
    /// the connection out (``reserveStream()``, under its slots' lock, so two callers never
    /// take the last stream), given back on the loop when a call's stream closes or the call
    /// ends unsent.
    private let activeCalls = Atomic<Int>(0)
    /// The server's SETTINGS_MAX_CONCURRENT_STREAMS once known; until then 100, the least
    /// RFC 9113 §6.5.2 recommends a server allow.
    private let streamLimit = Atomic<Int>(100)
    /// Whether streams are counted at all: only for a client that opens extra connections.
    private let countsStreams: Bool

    init(
        target: SocketAddressText, loop: EventLoop, configuration: ClientConfiguration, resolver: HostResolver,
        onClose: @escaping @Sendable (ClientConnection, Bool) -> Void
    ) {
        self.target = target
        self.loop = loop
        self.configuration = configuration
        self.resolver = resolver
        self.onClose = onClose
        self.countsStreams = configuration.maxExtraConnections > 0
        self.lifecycle = ClientConnectionStateMachine(maxStreams: configuration.maxStreamsPerConnection)
    }

    // MARK: Connecting

    /// Starts connecting. Loop thread. A literal address connects at once; a host name is
    /// looked up by the client's ``HostResolver`` (on a thread of its own: it may block on DNS).
    func connect() {
        loop.assertInLoop()
        // Shut down before its turn came (the client closed, or replaced its connections):
        // a socket opened now would belong to nobody.
        guard lifecycle.isConnecting else { return }
        // Strong capture: weak references would give the connection a side table and slow
        // every retain and release of it; the timer holds it for the connect timeout at most.
        loop.scheduleTimer(after: configuration.connectTimeout) { [self] in
            guard lifecycle.isConnecting else { return }
            shutDown(reason: "connect to \(self.target) timed out", cause: .timedOut)
        }
        if let address = try? Socket.resolve(target, passive: false, numericOnly: true).first {
            return connect(to: address)
        }
        let target = self.target
        resolver.resolve { [self] answer in
            loop.execute { [self] in
                guard lifecycle.isConnecting else { return }  // timed out meanwhile
                switch answer {
                case .success(let address?): connect(to: address)
                case .success(nil): shutDown(reason: "cannot resolve \(target)", cause: .hostNotFound(host: target.host))
                case .failure(let error):
                    shutDown(reason: "cannot resolve \(target): \(error)", cause: .hostNotFound(host: target.host))
                }
            }
        }
    }

    private func connect(to address: ResolvedAddress) {
        guard lifecycle.isConnecting else { return }
        do {
            let fd = try Socket.startConnect(to: address)
            socket = HTTP2Socket(fd: fd, loop: loop)
            try loop.register(fd, readable: false, writable: true, handler: self)
        } catch {
            shutDown(reason: "cannot connect to \(target): \(error)", cause: .connectFailed(errno: error.errno))
        }
    }

    func handleEvent(readable: Bool, writable: Bool, hangup: Bool) {

        loop.assertInLoop()
        guard let socket else { return }
        if lifecycle.isConnecting {
            guard writable || hangup else { return }
            if let error = Socket.pendingError(socket.fd) {
                return shutDown(reason: "cannot connect to \(target): \(error)", cause: .connectFailed(errno: error.errno))
            }
            guard lifecycle.socketConnected() else { return }
            socket.connected()
            session = HTTP2Session(limits: configuration.limits, calling: self)
            let queued = waiting
            waiting = []
            for call in queued { start(call) }
            flushOutput()
            scheduleKeepalive(after: configuration.keepaliveInterval)
            return
        }
        if writable { flushOutput() }
        guard readable || hangup, lifecycle.isReady else { return }
        if case .closed(let reason) = socket.readAvailable(into: session) {
            return shutDown(reason: reason ?? "the server closed the connection")
        }
        flushSoon()
    }

    /// Flushes at the end of this loop iteration, once for everything queued in it. Loop only.
    private func flushSoon() {
        socket?.flushSoon(self)
    }

    func flushOutput() {

        loop.assertInLoop()
        guard lifecycle.isReady, let socket else { return }
        if let failure = socket.flush(session) { return shutDown(reason: failure) }
        switch lifecycle.outputFlushed(sessionAlive: session.isAlive, callsOpen: !calls.isEmpty || !waiting.isEmpty) {
        case .none:
            break
        case .closeEndedByServer:
            shutDown(reason: "the server ended the connection")  // after its GOAWAY, once our calls finished
        case .closeRetired:
            session.submitGoAway()
            _ = socket.flush(session)
            shutDown(reason: "retired after \(lifecycle.streamsOpened) streams")
        }
    }

    // MARK: Calls

    /// Reserves a stream for a call about to be submitted here; false (reserving nothing) when
    /// the calls open or on their way already take every stream the server allows.
    func reserveStream() -> Bool {
        guard countsStreams else { return true }
        let count = activeCalls.wrappingAdd(1, ordering: .relaxed).newValue
        guard count > streamLimit.load(ordering: .relaxed) else { return true }
        activeCalls.subtract(1, ordering: .relaxed)
        return false
    }

    /// Counts a call submitted here whether or not a stream is free (it waits in the queue).
    func reserveStreamAnyway() {
        guard countsStreams else { return }
        activeCalls.add(1, ordering: .relaxed)
    }

    /// Takes `other`'s stream limit as this connection's until the server's SETTINGS arrive:
    /// a connection to the same server, opened because `other` was full, must not send more
    /// streams than it allows before it says so (it would refuse them).
    func assumeStreamLimit(of other: ClientConnection) {
        streamLimit.store(other.streamLimit.load(ordering: .relaxed), ordering: .relaxed)
    }

    /// Gives back the stream of a call that ended on this connection. Loop thread.
    private func releaseStream() {
        guard countsStreams else { return }
        activeCalls.subtract(1, ordering: .relaxed)
    }

    /// Submits a call on this connection. Any thread: on the loop's own (a handler that stays
    /// on its loop, calling upstream) the stream opens at once, else the loop is asked to.
    func submit(_ call: HTTP2ClientCall) {
        call.connection = self
        if loop.inEventLoop {
            start(call)
        } else {
            loop.execute { self.start(call) }
        }
    }

    private func start(_ call: HTTP2ClientCall) {

        loop.assertInLoop()
        switch lifecycle.callArrived() {
        case .wait:
            waiting.append(call)
            armDeadline(call)  // the caller's deadline holds while the connection is made
        case .refuseRetired:
            // Came on its way here before the connection was retired: never sent, so it may be
            // tried again on the connection that took over, whatever its method.
            releaseStream()
            call.complete(.failure(RPCError(
                code: .unavailable, reason: "REFUSED_STREAM", message: "The connection to \(target) was retired; the call was not sent.")))
        case .refuseClosed:
            releaseStream()
            call.complete(.failure(RPCError(
                code: .unavailable, reason: "UPSTREAM_UNAVAILABLE", message: "No connection to \(target).", cause: CallNotSent())))
        case .open:
            if call.hasEnded { return releaseStream() }  // cancelled before it started
            let id = session.submitRequest(call.head)
            guard id > 0 else {
                releaseStream()
                // Out of stream ids: the request never left, so the call may be tried again on
                // another connection whatever its method (a transparent retry).
                retire()
                call.complete(.failure(RPCError(
                    code: .unavailable, reason: "REFUSED_STREAM", message: "No stream left on the connection to \(target); the call was not sent.")))
                return
            }
            call.streamID = id
            calls.insert(call, for: id)
            // Waiting for a stream slot until its HEADERS go out (``sessionSentRequestHeaders(streamID:)``).
            if let waiting = configuration.metrics?.callsWaiting {
                call.awaitsStreamSlot = true
                waiting.increment()
            }
            armDeadline(call)
            if lifecycle.streamOpened() { retire() }
            flushSoon()
        }
    }

    /// ``retire()`` from any thread: the client has replaced this connection with others. One
    /// still connecting with no call waiting for it is given up instead (not counted as a
    /// failure: it is no longer in a slot), so that it is not accepted among the new ones.
    func retireSoon() {
        isUsable.store(false, ordering: .relaxed)
        loop.execute { [self] in
            if lifecycle.replacedClosesAtOnce(callsWaiting: !waiting.isEmpty) {
                shutDown(reason: "replaced before it connected")
            } else {
                retire()
            }
        }
    }

    /// How long a retired connection stays open at least, for calls already on their way to it.
    static let retirementGrace = Duration.milliseconds(100)

    /// Takes the connection out of use for new calls (the client makes another); it closes
    /// once the calls on it have finished (``flushOutput()``), and not before
    /// ``retirementGrace`` has passed.
    private func retire() {
        isUsable.store(false, ordering: .relaxed)
        guard lifecycle.retire() else { return }
        loop.scheduleTimer(after: Self.retirementGrace) { [self] in
            lifecycle.retirementGraceEnded()
            flushSoon()
        }
    }

    /// Starts a call's deadline timer when the call reaches this connection (once: a call that
    /// waited for the connection keeps the timer it got then). The time left was measured when
    /// the call was made, on this loop or just before the hop to it.
    private func armDeadline(_ call: HTTP2ClientCall) {
        guard call.deadlineTimer == nil, let timeLeft = call.timeLeft else { return }
        // The call is the timer's target (``HTTP2ClientCall/loopTimerFired()``): no closure per call.
        call.deadlineAt = EventLoop.instant(after: timeLeft)
        call.deadlineTimer = loop.scheduleTimer(at: call.deadlineAt, target: call)
    }

    /// Stops a call's deadline timer, which would otherwise hold the call until it fires.
    private func disarmDeadline(_ call: HTTP2ClientCall) {
        if let timer = call.deadlineTimer { loop.cancelTimer(timer) }
        call.deadlineTimer = nil
    }

    /// Asks the loop to send a call's new request bytes or grant its window. Any thread.
    func scheduleFlush(_ call: HTTP2ClientCall) {
        let schedule = pending.withLock { state -> Bool in
            state.calls.append(call)
            defer { state.scheduled = true }
            return !state.scheduled
        }
        if schedule { loop.execute { self.processPending() } }
    }

    private func processPending() {

        loop.assertInLoop()
        let ready = pending.withLock { state -> [HTTP2ClientCall] in
            state.scheduled = false
            defer { state.calls.removeAll(keepingCapacity: true) }
            return state.calls
        }
        guard lifecycle.isReady else { return }
        for call in ready where call.streamID > 0 && calls[call.streamID] != nil {
            session.resumeBody(streamID: call.streamID)
            if call.ungranted > 0 && call.canGrantWindow {
                session.consume(streamID: call.streamID, count: call.ungranted)
                call.ungranted = 0
            }
        }
        flushSoon()
    }

    /// Resets a call's stream with CANCEL. Any thread.
    func reset(_ call: HTTP2ClientCall) {
        loop.execute { self.resetNow(call) }
    }

    /// A call's deadline passed before its status came: it fails `DEADLINE_EXCEEDED` and its
    /// stream is reset. Loop only.
    func deadlinePassed(_ call: HTTP2ClientCall) {
        loop.assertInLoop()
        call.deadlineTimer = nil
        call.complete(.failure(Self.deadlineExceeded), droppingUnread: true)
        resetNow(call)
    }

    private func resetNow(_ call: HTTP2ClientCall) {

        loop.assertInLoop()
        // Ended: no longer waiting, though nghttp2 keeps a queued request until a slot frees.
        leaveSlotQueue(call)
        guard lifecycle.isReady, call.streamID > 0, calls[call.streamID] != nil else {
            waiting.removeAll { $0 === call }
            disarmDeadline(call)
            return
        }
        session.reset(streamID: call.streamID, errorCode: 8)  // CANCEL
        flushOutput()
    }

    // MARK: HTTP2SessionDelegate

    private func call(_ id: Int32) -> HTTP2ClientCall? {
        calls.unretained(id)?.takeUnretainedValue()
    }

    func sessionBeginHeaders(streamID: Int32) {}

    func sessionHeader(streamID: Int32, name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        // Unretained: storing a header ends nothing, so `calls` holds the call throughout.
        // What skipping the retain buys: see ``StreamMap/unretained(_:)``.
        calls.unretained(streamID)?._withUnsafeGuaranteedRef { call in
            if !call.receivedHeaders && KnownHeader.isStatus(name) {
                call.httpStatus = KnownHeader.decimal(value)
                return
            }
            if call.receivedHeaders && KnownHeader.isStatusOK(name, value) && !call.trailersSaidOK
                && call.trailers[RPCError.Trailer.status] == nil
            {
                call.trailersSaidOK = true
                return
            }
            let isContentType = name.count == 12 && KnownHeader(name) == .contentType
            if isContentType && !call.receivedHeaders {
                call.responseContentType = KnownHeader.contentType(value)
                return
            }
            let name = String(decoding: name, as: UTF8.self)
            let value = isContentType ? KnownHeader.contentType(value) : String(decoding: value, as: UTF8.self)
            if call.receivedHeaders {
                call.trailers.add(name, value)
            } else {
                call.responseMetadata.add(name, value)
            }
        }
    }

    func sessionHeadersComplete(streamID: Int32, endStream: Bool) {
        guard let call = call(streamID) else { return }
        if !call.receivedHeaders {
            call.receivedHeaders = true
            call.answered.store(true, ordering: .releasing)
            let contentType = call.responseContentType
            if call.httpStatus != 200 {
                // Not a gRPC response: the status comes from the HTTP status table.
                call.complete(.failure(RPCError.fromTrailers(call.responseMetadata, httpStatus: call.httpStatus)
                    ?? RPCError(code: .unknown, message: "HTTP status \(call.httpStatus).")))
                return
            }
            guard KnownHeader.isGRPC(contentType: contentType) else {
                call.complete(.failure(RPCError(code: .unknown, message: "Unexpected content-type '\(contentType)'.")))
                return
            }
            if endStream {  // Trailers-Only
                finish(call, trailers: call.responseMetadata)
                return
            }
            call.didReceiveHeaders(contentType: contentType, rest: call.responseMetadata)
        } else if endStream {
            if call.trailersSaidOK && !call.deframer.hasPartialMessage {
                call.complete(.success(()))  // grpc-status 0 came first: what follows it cannot change that
            } else {
                finish(call, trailers: call.trailers)
            }
        }
    }

    private func finish(_ call: HTTP2ClientCall, trailers: Metadata) {
        if call.deframer.hasPartialMessage {
            call.complete(.failure(RPCError(code: .internal, message: "The response ended inside a message.")))
            return
        }
        if let error = RPCError.fromTrailers(trailers, httpStatus: call.httpStatus) {
            call.complete(.failure(error))
        } else {
            call.complete(.success(()))
        }
    }

    func sessionData(streamID: Int32, bytes: UnsafeRawBufferPointer) {
        guard let call = call(streamID) else {
            session.consume(streamID: streamID, count: bytes.count)
            return
        }
        let grant: Bool
        do {
            var delivered: Bool?  // after a message: whether the reader's inbox is below its mark
            try call.deframer.process(bytes) { message in delivered = call.deliver(message) }
            grant = delivered ?? call.canGrantWindow
        } catch {
            call.complete(.failure(error))
            session.reset(streamID: streamID, errorCode: 8)
            grant = true
        }
        if grant {
            session.consume(streamID: streamID, count: call.ungranted + bytes.count)
            call.ungranted = 0
        } else {
            call.ungranted += bytes.count
        }
    }

    func sessionDataEndStream(streamID: Int32) {
        // A response that ends on DATA has no trailers: the status is missing.
        guard let call = call(streamID) else { return }
        finish(call, trailers: Metadata())
    }

    func sessionStreamClosed(streamID: Int32, errorCode: UInt32) {
        guard let call = calls.removeValue(forKey: streamID) else { return }
        leaveSlotQueue(call)
        releaseStream()
        disarmDeadline(call)
        call.ungranted = 0  // the connection's window had them back on arrival
        // Nearly every call has its status by now: build the reset's error only when it has not.
        if !call.hasEnded {
            let deadlinePassed = System.monotonicNanoseconds() >= call.deadlineAt  // never, without one (.max)
            call.complete(.failure(Self.error(forReset: errorCode, deadlinePassed: deadlinePassed)))
        }
    }

    func sessionSentEndStream(streamID: Int32) {}

    func sessionSentRequestHeaders(streamID: Int32) {
        if let call = calls[streamID] { leaveSlotQueue(call) }
    }

    /// Takes `call` out of the count of calls waiting for a stream slot, if it is in it.
    private func leaveSlotQueue(_ call: HTTP2ClientCall) {
        guard call.awaitsStreamSlot else { return }
        call.awaitsStreamSlot = false
        configuration.metrics?.callsWaiting?.decrement()
    }

    func sessionReadBody(streamID: Int32, into buffer: UnsafeMutableRawBufferPointer) -> HTTP2BodyRead {
        guard let call = call(streamID) else { return .bytes(count: 0, end: true, trailers: nil) }
        return call.readBody(into: buffer)
    }

    func sessionGoAway(lastStreamID: Int32, errorCode: UInt32) {
        isUsable.store(false, ordering: .relaxed)
    }

    func sessionPingAcknowledged() {
        lifecycle.pingAcknowledged()
    }

    func sessionSettingsReceived() {
        lifecycle.settingsReceived()
        streamLimit.store(session.remoteMaxConcurrentStreams, ordering: .relaxed)
    }

    /// What a call whose deadline passed ends with.
    static let deadlineExceeded = RPCError(code: .deadlineExceeded, message: "The deadline passed.")

    /// The status for a stream closed without one, from its RST_STREAM code. A CANCEL once the
    /// call's own deadline has passed is that deadline: the server gave up on it too (its
    /// deadline counts from the request's arrival, so it passes just after ours), and the reset
    /// was read before our timer — due in the same loop iteration — could fire.
    static func error(forReset code: UInt32, deadlinePassed: Bool = false) -> RPCError {
        if code == 8 && deadlinePassed { return deadlineExceeded }
        switch code {
        case 0: return RPCError(code: .internal, message: "The stream closed without a status.")
        case 7: return RPCError(code: .unavailable, reason: "REFUSED_STREAM", message: "The server refused the stream; it was not processed.")
        case 8: return RPCError(code: .cancelled, message: "The server cancelled the stream.")
        case 11: return RPCError(code: .resourceExhausted, message: "The server said to enhance our calm.")
        case 12: return RPCError(code: .permissionDenied, message: "Inadequate security.")
        default: return RPCError(code: .internal, message: "The stream was reset (HTTP/2 error \(code)).")
        }
    }

    // MARK: Keepalive

    /// Arms the keepalive timer (nothing when keepalive is off).
    private func scheduleKeepalive(after delay: Duration?) {
        guard let delay, lifecycle.isReady else { return }
        // Cancelled in shutDown(); a strong capture, as for the connect timer.
        keepaliveTimer = loop.scheduleTimer(after: delay) { [self] in keepaliveTick() }
    }

    /// Pings a quiet connection that has calls waiting; a ping still unanswered at the next
    /// tick (``ClientConfiguration/keepaliveTimeout`` later) means the server is gone.
    private func keepaliveTick() {
        keepaliveTimer = nil
        guard let socket, let interval = configuration.keepaliveInterval else { return }
        let quietFor = Duration.nanoseconds(Int64(System.monotonicNanoseconds() - socket.lastActivity))
        switch lifecycle.keepaliveTick(interval: interval, quietFor: quietFor, callsOpen: !calls.isEmpty) {
        case .none:
            break
        case .closeUnanswered:
            shutDown(reason: "the connection to \(target) stopped answering keepalive pings")
        case .tickAgain(let delay):
            scheduleKeepalive(after: delay)
        case .ping:
            session.submitPing()
            flushOutput()
            scheduleKeepalive(after: configuration.keepaliveTimeout)
        }
    }

    /// Sends a PING and shuts the connection down — its calls failing `UNAVAILABLE` — unless a
    /// PING is answered within `timeout`: for a connection whose server may have stopped (its
    /// health checks went unanswered), so that calls waiting on a hung server fail now, while a
    /// server whose loop still answers — only its checks were slow — keeps its calls. Loop only.
    func confirmAlive(within timeout: Duration) {
        loop.assertInLoop()
        guard lifecycle.confirmAlive() else { return }
        session.submitPing()
        flushOutput()
        // A strong capture, as for the keepalive timer: it holds the connection `timeout` at most.
        loop.scheduleTimer(after: timeout) { [self] in
            guard lifecycle.confirmationTimedOut() else { return }
            shutDown(reason: "the connection to \(target) answered no PING within \(timeout)")
        }
    }

    // MARK: Closing

    /// Closes the connection, failing every call on it with `UNAVAILABLE` — with `cause` when
    /// the connection was never made, for the caller to tell why. Loop thread.
    func shutDown(reason: String, cause: ConnectFailure? = nil) {
        loop.assertInLoop()
        guard lifecycle.close() else { return }
        if let timer = keepaliveTimer { loop.cancelTimer(timer) }
        isUsable.store(false, ordering: .relaxed)
        socket?.close()
        let error = RPCError(code: .unavailable, reason: "UPSTREAM_UNAVAILABLE", message: reason, cause: cause)
        // Calls still waiting for the connection were never written: retrying them is safe.
        let unsent = RPCError(code: .unavailable, reason: "UPSTREAM_UNAVAILABLE", message: reason, cause: cause ?? CallNotSent())
        let failed = waiting.map { ($0, unsent) } + calls.allValues.map { ($0, error) }
        for call in calls.allValues { leaveSlotQueue(call) }
        waiting = []
        calls.removeAll()
        // The client learns of the close (and starts its reconnect backoff) before the calls
        // fail: a caller that tries again on its failure must meet the backoff, not this
        // connection still in its slot with no backoff recorded yet.
        onClose(self, lifecycle.everConnected)
        for (call, error) in failed {
            disarmDeadline(call)
            call.complete(.failure(error))
        }
    }
}
