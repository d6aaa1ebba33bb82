private import CNGHTTP2
internal import RPC

/// Events an ``HTTP2Session`` reports while it processes received bytes. Called on the
/// session's loop thread, synchronously from ``HTTP2Session/receive(_:)`` or
/// ``HTTP2Session/nextOutput()``.
protocol HTTP2SessionDelegate: AnyObject {
    /// A new HEADERS block begins on a stream (request headers, response headers or trailers).
    func sessionBeginHeaders(streamID: Int32)
    /// One header field of the current block.
    func sessionHeader(streamID: Int32, name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)
    /// A HEADERS block is complete.
    func sessionHeadersComplete(streamID: Int32, endStream: Bool)
    /// DATA payload bytes for a stream.
    func sessionData(streamID: Int32, bytes: UnsafeRawBufferPointer)
    /// The peer half-closed a stream with END_STREAM on a DATA frame.
    func sessionDataEndStream(streamID: Int32)
    /// A stream is closed; `errorCode` is 0 for a clean close.
    func sessionStreamClosed(streamID: Int32, errorCode: UInt32)
    /// A frame with END_STREAM went out on a stream.
    func sessionSentEndStream(streamID: Int32)
    /// A request's HEADERS went out: its stream is open (until then nghttp2 held it, waiting
    /// for a stream slot the server's concurrency limit had taken).
    func sessionSentRequestHeaders(streamID: Int32)
    /// nghttp2 wants body bytes for a stream: copy at most `buffer.count` into `buffer`.
    func sessionReadBody(streamID: Int32, into buffer: UnsafeMutableRawBufferPointer) -> HTTP2BodyRead
    /// The peer sent GOAWAY.
    func sessionGoAway(lastStreamID: Int32, errorCode: UInt32)
    /// The peer acknowledged a PING.
    func sessionPingAcknowledged()
    /// The peer's SETTINGS arrived (not an acknowledgement of ours): it speaks HTTP/2.
    func sessionSettingsReceived()
    /// Response headers or trailers nghttp2 could not send; the stream is being reset.
    func sessionAnswerHeadersNotSent(streamID: Int32)
}

extension HTTP2SessionDelegate {
    func sessionAnswerHeadersNotSent(streamID: Int32) {}
}

/// What a body read produced.
enum HTTP2BodyRead {
    /// `count` bytes were copied; `end` finishes the body, and `trailers` (when given) are sent
    /// after it in a HEADERS frame carrying END_STREAM.
    case bytes(count: Int, end: Bool, trailers: HTTP2HeaderBlock?)
    /// Nothing to send now; ``HTTP2Session/resumeBody(streamID:)`` resumes it later.
    case deferred
}

/// Protocol limits the application sets instead of leaving them to library defaults.
public struct HTTP2Limits: Sendable {
    /// SETTINGS_MAX_CONCURRENT_STREAMS we advertise; streams above it are refused.
    public var maxConcurrentStreams: UInt32 = 256
    /// SETTINGS_MAX_HEADER_LIST_SIZE we advertise and enforce.
    public var maxHeaderListSize: Int = 16 * 1024
    /// The initial per-stream receive window.
    public var initialStreamWindow: UInt32 = 1 << 20
    /// The connection receive window.
    public var connectionWindow: Int32 = 16 << 20
    /// RST_STREAM frames a peer may send in a burst, then per second (rapid-reset defence).
    public var resetBurst: UInt64 = 1000
    /// See ``resetBurst``.
    public var resetRatePerSecond: UInt64 = 33
    /// CONTINUATION frames allowed in one header block.
    public var maxContinuations: Int = 8

    /// The defaults of DESIGN.md.
    public init() {}
}

/// One nghttp2 session: the only place that sees nghttp2 (with its callbacks). Not
/// thread-safe: owned by one connection on one loop.
final class HTTP2Session {
    private var session: OpaquePointer?
    /// The connection this session reports to, unretained: the connection owns this session and
    /// outlives it, and callbacks run only inside calls the connection makes. Held by its
    /// concrete type, so a callback reaches it with no retain and release (what that buys:
    /// ``HTTP2Session/with(_:_:)``).
    private let delegate: DelegateReference
    /// The loop the session is confined to: every nghttp2 callback asserts it runs there.
    private let loop: EventLoop
    /// nghttp2's allocations for this session (free lists per size instead of malloc and free
    /// for each of a stream's blocks); freed after the session.
    private let memory = NGHTTP2Allocator()

    /// The connection a session reports to, by its concrete type.
    private enum DelegateReference {
        case server(Unmanaged<ServerConnection>)
        case client(Unmanaged<ClientConnection>)
    }

    /// A server session reporting to `connection`.
    convenience init(limits: HTTP2Limits, serving connection: ServerConnection) {
        self.init(server: true, limits: limits, delegate: .server(.passUnretained(connection)), loop: connection.loop)
    }

    /// A client session reporting to `connection`.
    convenience init(limits: HTTP2Limits, calling connection: ClientConnection) {
        self.init(server: false, limits: limits, delegate: .client(.passUnretained(connection)), loop: connection.loop)
    }
    private let isServer: Bool

    /// Creates a server or client session reporting to `delegate`, and queues our SETTINGS.
    private init(server: Bool, limits: HTTP2Limits, delegate: DelegateReference, loop: EventLoop) {
        self.delegate = delegate
        self.loop = loop
        self.isServer = server
        var callbacks: OpaquePointer?
        nghttp2_session_callbacks_new(&callbacks)
        defer { nghttp2_session_callbacks_del(callbacks) }
        nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks, onBeginHeaders)
        nghttp2_session_callbacks_set_on_header_callback(callbacks, onHeader)
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, onFrameReceived)
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, onDataChunk)
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, onStreamClose)
        nghttp2_session_callbacks_set_on_frame_send_callback(callbacks, onFrameSent)
        nghttp2_session_callbacks_set_on_frame_not_send_callback(callbacks, onFrameNotSent)

        var option: OpaquePointer?
        nghttp2_option_new(&option)
        defer { nghttp2_option_del(option) }
        // We grant window ourselves as handlers consume messages (inbound backpressure).
        nghttp2_option_set_no_auto_window_update(option, 1)
        nghttp2_option_set_max_send_header_block_length(option, 64 * 1024)
        nghttp2_option_set_stream_reset_rate_limit(option, limits.resetBurst, limits.resetRatePerSecond)
        nghttp2_option_set_max_continuations(option, limits.maxContinuations)
        if !server { nghttp2_option_set_peer_max_concurrent_streams(option, 100) }

        let userData = Unmanaged.passUnretained(self).toOpaque()
        // nghttp2 copies the struct; `memory` lives as long as the session (freed after it).
        var mem = nghttp2_mem(
            mem_user_data: Unmanaged.passUnretained(memory).toOpaque(), malloc: memoryAllocate, free: memoryFree,
            calloc: memoryAllocateZeroed, realloc: memoryReallocate)
        if server {
            nghttp2_session_server_new3(&session, callbacks, userData, option, &mem)
        } else {
            nghttp2_session_client_new3(&session, callbacks, userData, option, &mem)
        }
        var settings = [
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue), value: limits.maxConcurrentStreams),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE.rawValue), value: limits.initialStreamWindow),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE.rawValue), value: UInt32(limits.maxHeaderListSize)),
        ]
        if !server {
            settings.append(nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_ENABLE_PUSH.rawValue), value: 0))
        }
        nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), settings, settings.count)
        nghttp2_session_set_local_window_size(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), 0, limits.connectionWindow)
    }

    deinit {
        nghttp2_session_del(session)
    }

    /// Feeds received bytes; throws on a protocol violation that ends the connection.
    func receive(_ bytes: UnsafeRawBufferPointer) throws(HTTP2SessionError) {
        let result = nghttp2_session_mem_recv(session, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count)
        if result < 0 {
            // Tell the peer why before the connection closes (RFC 9113 §5.4.1); a peer that
            // did not even send the preface gets nothing.
            if Int32(result) != NGHTTP2_ERR_BAD_CLIENT_MAGIC.rawValue {
                let code = Int32(result) == NGHTTP2_ERR_TOO_MANY_CONTINUATIONS.rawValue || Int32(result) == NGHTTP2_ERR_FLOODED.rawValue
                    ? NGHTTP2_ENHANCE_YOUR_CALM.rawValue : NGHTTP2_PROTOCOL_ERROR.rawValue
                nghttp2_session_terminate_session(session, code)
            }
            throw HTTP2SessionError(code: Int32(result))
        }
    }

    /// The next bytes to write, valid until the next call; `nil` when nothing is pending.
    func nextOutput() throws(HTTP2SessionError) -> UnsafeRawBufferPointer? {
        var pointer: UnsafePointer<UInt8>?
        let count = nghttp2_session_mem_send(session, &pointer)
        if count < 0 { throw HTTP2SessionError(code: Int32(count)) }
        guard count > 0, let pointer else { return nil }
        return UnsafeRawBufferPointer(start: pointer, count: count)
    }

    /// Whether the session wants to read or write more; when neither, the connection is done.
    var isAlive: Bool { nghttp2_session_want_read(session) != 0 || nghttp2_session_want_write(session) != 0 }

    /// Submits response headers; with `body`, DATA follows from ``HTTP2SessionDelegate/sessionReadBody(streamID:into:)``,
    /// without it the HEADERS frame ends the stream (a Trailers-Only response).
    func submitResponse(streamID: Int32, headers: HTTP2HeaderBlock, body: Bool) {
        let fields = headers.fields.assumingMemoryBound(to: nghttp2_nv.self)
        var provider = nghttp2_data_provider(source: nghttp2_data_source(ptr: nil), read_callback: readBody)
        _ = body ? nghttp2_submit_response(session, streamID, fields, headers.count, &provider)
            : nghttp2_submit_response(session, streamID, fields, headers.count, nil)
    }

    /// Submits a request; returns its stream id, or a negative error when no stream is left.
    func submitRequest(_ head: RequestHead) -> Int32 {
        withHeaderFields(head) { fields, count in
            var provider = nghttp2_data_provider(source: nghttp2_data_source(ptr: nil), read_callback: readBody)
            return nghttp2_submit_request(session, nil, fields, count, &provider, nil)
        }
    }

    /// The most streams the peer lets us have open at once (its SETTINGS_MAX_CONCURRENT_STREAMS;
    /// unlimited until its SETTINGS arrive).
    var remoteMaxConcurrentStreams: Int {
        Int(nghttp2_session_get_remote_settings(session, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS))
    }

    /// How many DATA bytes the peer lets us send on a stream now: the smaller of its stream's
    /// and the connection's flow-control windows; 0 or less while either is shut.
    func sendWindow(streamID: Int32) -> Int {
        let stream = nghttp2_session_get_stream_remote_window_size(session, streamID)
        guard stream >= 0 else { return 0 }  // no such stream: nothing can be sent on it
        return Int(min(stream, nghttp2_session_get_remote_window_size(session)))
    }

    /// Resumes a deferred body.
    func resumeBody(streamID: Int32) {
        nghttp2_session_resume_data(session, streamID)
    }

    /// Resets a stream with an HTTP/2 error code (0 NO_ERROR, 7 REFUSED_STREAM, 8 CANCEL…).
    func reset(streamID: Int32, errorCode: UInt32) {
        nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), streamID, errorCode)
    }

    /// Grants the peer `count` more bytes of window on a stream: its handler (or reader) has
    /// taken the messages they carried.
    ///
    /// Only the stream's window waits for the reader. The connection's is returned as soon as
    /// DATA arrives (in the data callback): were it held back too, a few streams whose readers
    /// fell behind — a proxied watch whose client stops reading — would use up the whole
    /// connection window and stall every other call on the connection. What one connection
    /// can make us buffer is bounded per stream instead: its window plus the inbox mark
    /// (``StreamBuffers/inboundHighWater``), times the concurrent streams.
    func consume(streamID: Int32, count: Int) {
        guard count > 0 else { return }
        // Fails only for a stream already closed, whose window no longer matters.
        _ = nghttp2_session_consume_stream(session, streamID, count)
    }

    /// Sends the GOAWAY shutdown notice (last stream id 2^31-1).
    func submitShutdownNotice() {
        nghttp2_submit_shutdown_notice(session)
    }

    /// Sends the final GOAWAY naming the last stream processed.
    func submitGoAway(errorCode: UInt32 = 0) {
        nghttp2_submit_goaway(
            session, UInt8(NGHTTP2_FLAG_NONE.rawValue), nghttp2_session_get_last_proc_stream_id(session), errorCode, nil, 0)
    }

    /// Sends a PING (keepalive).
    func submitPing() {
        nghttp2_submit_ping(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), nil)
    }

    /// Runs `body` with a request's header fields as nghttp2 name/value pairs (which nghttp2
    /// copies), laid out in one temporary buffer sized up front — on the stack for the usual
    /// few hundred bytes.
    private func withHeaderFields<Result>(_ head: RequestHead, _ body: (UnsafePointer<nghttp2_nv>, Int) -> Result) -> Result {
        var size = (bytes: 1, fields: 0)  // never an empty buffer
        head.forEachField(&size) { size, name, value, _ in
            size.bytes += name.utf8.count + value.utf8.count
            size.fields += 1
        }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: size.bytes) { bytes in
            withUnsafeTemporaryAllocation(of: nghttp2_nv.self, capacity: max(1, size.fields)) { fields in
                var layout = HeaderLayout(bytes: bytes.baseAddress!, fields: fields.baseAddress!)
                head.forEachField(&layout) { layout, name, value, neverIndexed in layout.append(name, value, neverIndexed: neverIndexed) }
                return body(fields.baseAddress!, layout.count)
            }
        }
    }

    /// Lays header fields out as nghttp2 name/value pairs in buffers sized beforehand.
    private struct HeaderLayout {
        let bytes: UnsafeMutablePointer<UInt8>
        let fields: UnsafeMutablePointer<nghttp2_nv>
        var offset = 0
        var count = 0

        mutating func append(_ name: String, _ value: String, neverIndexed: Bool) {
            let name = copy(name)
            let value = copy(value)
            (fields + count).initialize(to: nghttp2_nv(
                name: name.start, value: value.start, namelen: name.count, valuelen: value.count,
                flags: UInt8((neverIndexed ? NGHTTP2_NV_FLAG_NO_INDEX : NGHTTP2_NV_FLAG_NONE).rawValue)))
            count += 1
        }

        /// Copies a string's UTF-8 into the buffer: straight from its storage (no copy of the
        /// string, so no retain) unless it is a bridged one without contiguous UTF-8.
        private mutating func copy(_ text: String) -> (start: UnsafeMutablePointer<UInt8>, count: Int) {
            let start = bytes + offset
            let copied =
                text.utf8.withContiguousStorageIfAvailable { utf8 in
                    if let source = utf8.baseAddress { start.initialize(from: source, count: utf8.count) }
                    return utf8.count
                } ?? {
                    var count = 0
                    for byte in text.utf8 {
                        (start + count).initialize(to: byte)
                        count += 1
                    }
                    return count
                }()
            offset += copied
            return (start, copied)
        }
    }

    /// Runs `body` with the session a C callback's user data points at (nghttp2 hands back the
    /// pointer the session was created with: Unmanaged is the only way across C), without
    /// retaining it; debug builds check the callback runs on the session's loop. The session
    /// outlives every callback nghttp2 makes into it. Unretained for `Benchmarks/gateway-ab`
    /// (Benchmarks/HISTORY.md, 2026-11-27, 89557bf): a retain and release per callback.
    fileprivate static func with<Result>(_ userData: UnsafeMutableRawPointer?, _ body: (HTTP2Session) -> Result) -> Result {
        Unmanaged<HTTP2Session>.fromOpaque(userData!)._withUnsafeGuaranteedRef { session in
            session.loop.assertInLoop()
            return body(session)
        }
    }

    /// Runs `body` with the session's delegate, without retaining it (as ``with(_:_:)``).
    @inline(__always)
    fileprivate static func withDelegate<Result>(
        _ userData: UnsafeMutableRawPointer?, _ body: (any HTTP2SessionDelegate) -> Result
    ) -> Result {
        with(userData) { session in
            switch session.delegate {
            case .server(let connection): connection._withUnsafeGuaranteedRef { body($0) }
            case .client(let connection): connection._withUnsafeGuaranteedRef { body($0) }
            }
        }
    }

    fileprivate func submitTrailers(streamID: Int32, _ trailers: HTTP2HeaderBlock) {
        _ = nghttp2_submit_trailer(session, streamID, trailers.fields.assumingMemoryBound(to: nghttp2_nv.self), trailers.count)
    }
}

/// A header list encoded once as nghttp2 name/value pairs whose bytes nghttp2 may use
/// without copying, so response headers and the OK trailers cost nothing per call.
///
/// Immutable after init; its memory lives as long as the block, which must outlive every
/// frame submitted with it (blocks are cached per connection or for the whole process).
final class HTTP2HeaderBlock: @unchecked Sendable {
    // Invariant for @unchecked Sendable: `storage` and `fields` are written only in init.
    fileprivate let fields: UnsafeMutableRawPointer
    fileprivate let count: Int
    private let storage: UnsafeMutableRawPointer

    /// Encodes `headers` (lower-case names).
    init(_ headers: [(String, String)]) {
        let size = headers.reduce(1) { $0 + $1.0.utf8.count + $1.1.utf8.count }
        let bytes = UnsafeMutablePointer<UInt8>.allocate(capacity: size)
        let fields = UnsafeMutablePointer<nghttp2_nv>.allocate(capacity: max(1, headers.count))
        var offset = 0
        for (index, (name, value)) in headers.enumerated() {
            let nameStart = bytes + offset
            for byte in name.utf8 { bytes[offset] = byte; offset += 1 }
            let valueStart = bytes + offset
            for byte in value.utf8 { bytes[offset] = byte; offset += 1 }
            (fields + index).initialize(to: nghttp2_nv(
                name: nameStart, value: valueStart, namelen: name.utf8.count, valuelen: value.utf8.count,
                flags: UInt8(NGHTTP2_NV_FLAG_NO_COPY_NAME.rawValue | NGHTTP2_NV_FLAG_NO_COPY_VALUE.rawValue)))
        }
        self.storage = UnsafeMutableRawPointer(bytes)
        self.fields = UnsafeMutableRawPointer(fields)
        self.count = headers.count
    }

    deinit {
        fields.assumingMemoryBound(to: nghttp2_nv.self).deinitialize(count: count)
        fields.deallocate()
        storage.deallocate()
    }

    /// The trailers of every successful call.
    static let ok = HTTP2HeaderBlock(RPCError.okTrailers)
}

/// A fatal nghttp2 error; the connection is closed.
struct HTTP2SessionError: Error, CustomStringConvertible {
    /// nghttp2's error code.
    let code: Int32
    var description: String { String(cString: nghttp2_strerror(code)) }
}

// MARK: - C callbacks: translate nghttp2's frames into delegate calls.

private let headersType = UInt8(NGHTTP2_HEADERS.rawValue)
private let dataType = UInt8(NGHTTP2_DATA.rawValue)
private let endStreamFlag = UInt8(NGHTTP2_FLAG_END_STREAM.rawValue)

// nghttp2_mem hooks: the session's ``NGHTTP2Allocator``, reached without retaining it (it
// outlives the session's nghttp2 state, which it frees last), as ``HTTP2Session/with(_:_:)``
// reaches the session: a retain and release per allocation otherwise (`Benchmarks/gateway-ab`,
// Benchmarks/HISTORY.md, 2026-11-27, 89557bf, measured with the callbacks' unretained access).
private func withMemory<Result>(_ userData: UnsafeMutableRawPointer?, _ body: (NGHTTP2Allocator) -> Result) -> Result {
    Unmanaged<NGHTTP2Allocator>.fromOpaque(userData!)._withUnsafeGuaranteedRef(body)
}
private let memoryAllocate: nghttp2_malloc = { size, userData in withMemory(userData) { $0.allocate(size) } }
private let memoryFree: nghttp2_free = { pointer, userData in withMemory(userData) { $0.free(pointer) } }
private let memoryAllocateZeroed: nghttp2_calloc = { count, size, userData in
    withMemory(userData) { $0.allocateZeroed(count: count, size: size) }
}
private let memoryReallocate: nghttp2_realloc = { pointer, size, userData in
    withMemory(userData) { $0.reallocate(pointer, to: size) }
}

private let onBeginHeaders: nghttp2_on_begin_headers_callback = { _, frame, userData in
    guard let frame, frame.pointee.hd.type == headersType else { return 0 }
    HTTP2Session.withDelegate(userData) { $0.sessionBeginHeaders(streamID: frame.pointee.hd.stream_id) }
    return 0
}

private let onHeader: nghttp2_on_header_callback = { _, frame, name, nameLength, value, valueLength, _, userData in
    guard let frame else { return 0 }
    HTTP2Session.withDelegate(userData) {
        $0.sessionHeader(
            streamID: frame.pointee.hd.stream_id,
            name: UnsafeRawBufferPointer(start: name, count: nameLength),
            value: UnsafeRawBufferPointer(start: value, count: valueLength))
    }
    return 0
}

private let onFrameReceived: nghttp2_on_frame_recv_callback = { _, frame, userData in
    guard let frame else { return 0 }
    let header = frame.pointee.hd
    let endStream = header.flags & endStreamFlag != 0
    HTTP2Session.withDelegate(userData) { delegate in
        switch Int(header.type) {
        case Int(NGHTTP2_HEADERS.rawValue):
            delegate.sessionHeadersComplete(streamID: header.stream_id, endStream: endStream)
        case Int(NGHTTP2_DATA.rawValue):
            if endStream { delegate.sessionDataEndStream(streamID: header.stream_id) }
        case Int(NGHTTP2_GOAWAY.rawValue):
            delegate.sessionGoAway(lastStreamID: frame.pointee.goaway.last_stream_id, errorCode: frame.pointee.goaway.error_code)
        case Int(NGHTTP2_PING.rawValue):
            if header.flags & UInt8(NGHTTP2_FLAG_ACK.rawValue) != 0 { delegate.sessionPingAcknowledged() }
        case Int(NGHTTP2_SETTINGS.rawValue):
            if header.flags & UInt8(NGHTTP2_FLAG_ACK.rawValue) == 0 { delegate.sessionSettingsReceived() }
        default:
            break
        }
    }
    return 0
}

private let onDataChunk: nghttp2_on_data_chunk_recv_callback = { session, _, streamID, data, length, userData in
    // The connection's window is returned as the bytes arrive; only the stream's is held back
    // for unread messages (see ``HTTP2Session/consume(streamID:count:)``).
    nghttp2_session_consume_connection(session, length)
    HTTP2Session.withDelegate(userData) {
        $0.sessionData(streamID: streamID, bytes: UnsafeRawBufferPointer(start: data, count: length))
    }
    return 0
}

private let onStreamClose: nghttp2_on_stream_close_callback = { _, streamID, errorCode, userData in
    HTTP2Session.withDelegate(userData) { $0.sessionStreamClosed(streamID: streamID, errorCode: errorCode) }
    return 0
}

private let onFrameSent: nghttp2_on_frame_send_callback = { _, frame, userData in
    guard let frame else { return 0 }
    let header = frame.pointee.hd
    if header.type == headersType && frame.pointee.headers.cat == NGHTTP2_HCAT_REQUEST {
        HTTP2Session.withDelegate(userData) { $0.sessionSentRequestHeaders(streamID: header.stream_id) }
    }
    if header.flags & endStreamFlag != 0 && (header.type == headersType || header.type == dataType) {
        HTTP2Session.withDelegate(userData) { $0.sessionSentEndStream(streamID: header.stream_id) }
    }
    return 0
}

/// A HEADERS frame nghttp2 could not send (headers or trailers past its 64 KiB limit, say):
/// the stream is reset, so that its peer gets an answer — a reset — rather than waiting for
/// one that will never come, and the stream's slot is freed.
///
/// Not a request's HEADERS: that stream never opened (nghttp2 also drops a queued request
/// this way when it is reset before a stream slot freed up — a call whose deadline passed
/// while it waited), and RST_STREAM on an idle stream is a connection error (RFC 9113 §6.4):
/// the server would close the connection and fail every call on it. nghttp2 closes such a
/// stream itself, which ends the call.
private let onFrameNotSent: nghttp2_on_frame_not_send_callback = { session, frame, _, userData in
    guard let frame, frame.pointee.hd.type == headersType, frame.pointee.hd.stream_id > 0,
        frame.pointee.headers.cat != NGHTTP2_HCAT_REQUEST
    else { return 0 }
    HTTP2Session.withDelegate(userData) { $0.sessionAnswerHeadersNotSent(streamID: frame.pointee.hd.stream_id) }
    nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), frame.pointee.hd.stream_id, NGHTTP2_INTERNAL_ERROR.rawValue)
    return 0
}

private let readBody: nghttp2_data_source_read_callback = { _, streamID, buffer, length, flags, _, userData in
    let target = UnsafeMutableRawBufferPointer(start: buffer, count: length)
    switch HTTP2Session.withDelegate(userData, { $0.sessionReadBody(streamID: streamID, into: target) }) {
    case .deferred:
        return Int(NGHTTP2_ERR_DEFERRED.rawValue)
    case .bytes(let count, let end, let trailers):
        if end {
            flags!.pointee |= UInt32(NGHTTP2_DATA_FLAG_EOF.rawValue)
            if let trailers {
                flags!.pointee |= UInt32(NGHTTP2_DATA_FLAG_NO_END_STREAM.rawValue)
                HTTP2Session.with(userData) { $0.submitTrailers(streamID: streamID, trailers) }
            }
        }
        return count
    }
}
