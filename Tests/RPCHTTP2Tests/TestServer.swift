import Foundation
import Logging
import RPC
import RPCHTTP2
import Synchronization
import Testing

/// A logger that only speaks up about problems, to keep test output short.
let quietLogger: Logger = {
    var logger = Logger(label: "rpchttp2-tests")
    logger.logLevel = .warning
    return logger
}()

/// A logger that accepts every level and throws the lines away: the server's per-call logging
/// code runs in full, without filling the test output.
let discardingLogger = Logger(label: "rpchttp2-tests-discard") { _ in DiscardingLogHandler() }

/// A log handler that enables every level and writes nothing.
struct DiscardingLogHandler: LogHandler {
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    func log(event: LogEvent) {}
}

/// The live tests, over real loopback sockets. Serialized: they assert on timing (deadlines,
/// "at once", a stalled writer) and some are heavy (1000 concurrent calls, 64 MiB, 4 MiB JSON,
/// a Python peer); run all at once on a two-core machine they starve the cooperative pool
/// that handlers and clients share, and the timings stop meaning anything.
@Suite("Live RPC over loopback", .serialized)
struct LiveTests {}

/// One test's server on a free loopback port, with a client connected to it and the probe
/// its handlers report to. Every test starts its own.
struct LiveServer: Sendable {
    let server: HTTP2Server
    let client: RPCClient
    let probe: Probe
    let port: Int

    /// The server's address.
    var address: SocketAddressText { SocketAddressText(host: "127.0.0.1", port: port) }

    /// A further client of this server; the caller closes it.
    func makeClient(configuration: ClientConfiguration = ClientConfiguration()) throws -> RPCClient {
        try RPCClient(target: address, configuration: configuration)
    }
}

/// Starts the echo server on port 0 and a client, runs `body`, then closes both, whether
/// `body` returned or threw.
@discardableResult
func withLiveServer<Result>(
    configure: (inout ServerConfiguration) -> Void = { _ in },
    logger: Logger = quietLogger,
    _ body: (LiveServer) async throws -> Result
) async throws -> Result {
    var configuration = ServerConfiguration(host: "127.0.0.1", port: 0)
    configure(&configuration)
    let probe = Probe()
    let server = try HTTP2Server(configuration: configuration, router: .echoRouter(probe: probe), logger: logger)
    return try await withStartedServer(server) { port, client in
        try await body(LiveServer(server: server, client: client, probe: probe, port: port))
    }
}

/// Starts a server of the router `makeRouter` builds on one event loop of its own, named
/// `loopName` (so handlers can tell whether they run on it), connects a client, runs `body`
/// with the server, its port and the client, then closes everything.
func withOneLoopServer<Result>(
    loopName: String, logger: Logger, configure: (inout ServerConfiguration) -> Void,
    router makeRouter: (EventLoopGroup) -> Router,
    _ body: (_ server: HTTP2Server, _ port: Int, _ client: RPCClient) async throws -> Result
) async throws -> Result {
    var configuration = ServerConfiguration(host: "127.0.0.1", port: 0)
    configure(&configuration)
    let group = try EventLoopGroup(count: 1, name: loopName)
    let server = HTTP2Server(configuration: configuration, router: makeRouter(group), logger: logger, group: group, ownsGroup: true)
    // A server that never started does not stop its loops.
    return try await withStartedServer(server, cannotStart: { await group.shutdown() }) { port, client in
        try await body(server, port, client)
    }
}

/// Starts `server` on its configured port, connects a client to it, runs `body` with the port
/// and the client, then closes both, whether `body` returned or threw. `cannotStart` runs
/// when the server does not start (its own loops, say, are not stopped by a failed start).
func withStartedServer<Result>(
    _ server: HTTP2Server, cannotStart: () async -> Void = {},
    _ body: (_ port: Int, _ client: RPCClient) async throws -> Result
) async throws -> Result {
    let port: Int
    do {
        port = try server.start()
    } catch {
        await cannotStart()
        throw error
    }
    let client: RPCClient
    do {
        client = try RPCClient(target: SocketAddressText(host: "127.0.0.1", port: port))
    } catch {
        await server.shutdown()
        throw error
    }
    let result: Result
    do {
        result = try await body(port, client)
    } catch {
        await client.close()
        await server.shutdown()
        throw error
    }
    // The client goes first so the server has no open connection to wait for.
    await client.close()
    await server.shutdown()
    return result
}

/// Runs `body` and returns the ``RPCError`` it threw, recording an issue when it succeeded,
/// threw something else, or threw another code or reason than expected.
@discardableResult
func expectRPCError<Value>(
    _ code: RPCCode, reason: String? = nil, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> Value
) async -> RPCError? {
    do {
        let value = try await body()
        Issue.record("expected \(code.name), but the call succeeded with \(value)", sourceLocation: sourceLocation)
        return nil
    } catch let error as RPCError {
        #expect(error.code == code, "got \(error)", sourceLocation: sourceLocation)
        if let reason {
            #expect(error.reason == reason, "got \(error)", sourceLocation: sourceLocation)
        }
        return error
    } catch {
        Issue.record("expected RPCError \(code.name), got \(type(of: error)): \(error)", sourceLocation: sourceLocation)
        return nil
    }
}


/// Runs `body` and returns its result with the time it took.
func timed<Value>(_ body: () async throws -> Value) async rethrows -> (Value, Duration) {
    let start = ContinuousClock.now
    let value = try await body()
    return (value, ContinuousClock.now - start)
}

extension RPCClient {
    /// Reads every response of a server-streaming call into an array.
    func collect<Request, Response>(
        _ method: MethodDescriptor<Request, Response>, _ request: Request, options: CallOptions = CallOptions()
    ) async throws -> [Response] {
        try await serverStreaming(method, request, options: options) { responses in
            var collected: [Response] = []
            for try await response in responses { collected.append(response) }
            return collected
        }
    }
}

let mebibyte = 1024 * 1024

/// A number several tasks add to. Thread-safe.
final class Counter: Sendable {
    private let state = Mutex(0)

    /// Adds `amount`.
    func add(_ amount: Int) { state.withLock { $0 += amount } }

    /// The current total.
    var value: Int { state.withLock { $0 } }
}

/// Runs `body` on `loop`'s thread and returns what it returns (loop-only state, the thread's own
/// CPUs).
func onLoop<Value: Sendable>(_ loop: EventLoop, _ body: @escaping @Sendable () -> Value) async -> Value {
    await withCheckedContinuation { continuation in
        loop.execute { continuation.resume(returning: body()) }
    }
}
