public import Foundation
internal import Synchronization

/// A call of a router's method made in-process on behalf of another protocol (the gateway's
/// Connect and gRPC-Web edge): it runs the same interceptors (keys, tokens, rate limits) and
/// the same handler a gRPC call of that path gets, so both protocols behave alike.
public enum LocalCall {
    /// Starts a unary call whose one request message is `request`; `answer` gets the response
    /// message or the error the call ended with, once, from any thread. Returns what cancels
    /// the call (the client went away): the handler's work stops, and `answer` still gets what
    /// it ended with (`CANCELLED`, as a rule) unless it was already answered.
    ///
    /// Like the gRPC transport, a callback or immediate handler whose interceptors never
    /// suspend starts right here, without a task.
    @discardableResult
    public static func unary(
        _ route: RegisteredMethod, context: ServerContext, request: Data,
        answer: @escaping @Sendable (Result<Data, any Error>) -> Void
    ) -> @Sendable () -> Void {
        let responder = CallResponder(deliver: answer)
        if route.interceptors.canPrepareImmediately, route.callbackHandler != nil || route.immediateHandler != nil {
            var context = context
            do {
                try route.interceptors.prepareImmediately(&context)
            } catch {
                responder.respond(.failure(error))
                return {}
            }
            if let callback = route.callbackHandler {
                callback(request, context, responder)
            } else if let immediate = route.immediateHandler {
                responder.respond(Result { try immediate(request, context) })
            }
            return { responder.cancel() }
        }
        let task = Task {
            let io = LocalCallIO(requests: [request], write: { message in responder.respond(.success(message)) })
            var context = context
            do {
                try await route.interceptors.prepare(&context)
                try await route.handler(io, context)
                responder.respond(.failure(Router.noResponseMessage))  // ignored once answered
            } catch {
                responder.respond(.failure(error))
            }
        }
        responder.onCancel { task.cancel() }
        return { responder.cancel() }
    }

    /// Runs a call of any kind to its end: `requests` are its request messages (then the
    /// client's half-close), `write` receives each response message and may suspend
    /// (backpressure). Returns the status the call ended with, nil for OK. Cancelling the
    /// calling task cancels the call.
    public static func run(
        _ route: RegisteredMethod, context: ServerContext, requests: [Data],
        write: @escaping @Sendable (Data) async throws -> Void
    ) async -> RPCError? {
        let io = LocalCallIO(requests: requests, write: write)
        var context = context
        do {
            try await route.interceptors.prepare(&context)
            try await route.handler(io, context)
            return nil
        } catch {
            return RPCError(converting: error)
        }
    }
}

extension Router {
    /// What a unary handler that returned without writing its answer ends with.
    static let noResponseMessage = RPCError(code: .internal, message: "The handler sent no response message.")
}

/// The call I/O of a ``LocalCall``: its request messages from memory, its answers to a closure.
final class LocalCallIO: ServerCallIO {
    private let requests: PortableMutex<[Data]>
    private let writer: @Sendable (Data) async throws -> Void

    init(requests: [Data], write: @escaping @Sendable (Data) async throws -> Void) {
        self.requests = PortableMutex(requests.reversed())
        self.writer = write
    }

    func nextMessage() async throws -> Data? {
        try Task.checkCancellation()
        return requests.withLock { $0.popLast() }
    }

    func write(_ message: Data) async throws {
        try Task.checkCancellation()
        try await writer(message)
    }
}
