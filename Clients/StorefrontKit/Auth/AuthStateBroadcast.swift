import Contracts
import Foundation
import RPC
import Synchronization

/// Who is signed in, as ``StorefrontAuth/currentUser`` reads it at once and
/// ``StorefrontAuth/stateChanges`` streams it: every stream starts with the current user and
/// then gets each change (a sign-in, a sign-out, the user's account changing) — Firebase's
/// `addStateDidChangeListener`. A refresh that leaves the user as it was tells nobody.
///
/// Thread-safe: the user and the streams live behind one lock, so a new stream can neither
/// miss a change nor see one twice.
final class AuthStateBroadcast: Sendable {
    private struct State {
        var user: User?
        var streams: [UUID: AsyncStream<User?>.Continuation] = [:]
        /// Set by ``finish()``: a stream made after it ends after its first user.
        var finished = false
    }

    private let state: PortableMutex<State>

    /// A broadcast whose current user is `user`.
    init(user: User?) {
        state = PortableMutex(State(user: user))
    }

    /// The signed-in user; nil when signed out.
    var user: User? { state.withLock { $0.user } }

    /// Makes `user` the current user, telling every stream when it differs from the last.
    func publish(_ user: User?) {
        let streams = state.withLock { state -> [AsyncStream<User?>.Continuation] in
            guard state.user != user else { return [] }
            state.user = user
            return Array(state.streams.values)
        }
        for stream in streams { stream.yield(user) }
    }

    /// A stream of the current user, then of every change, until the consumer stops iterating
    /// or the client closes (``finish()``). A consumer slower than the changes gets the latest
    /// user, never a backlog.
    func stream() -> AsyncStream<User?> {
        let (stream, continuation) = AsyncStream.makeStream(of: User?.self, bufferingPolicy: .bufferingNewest(1))
        let id = UUID()
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.streams.removeValue(forKey: id) }
        }
        let finished = state.withLock { state -> Bool in
            continuation.yield(state.user)
            if !state.finished { state.streams[id] = continuation }
            return state.finished
        }
        if finished { continuation.finish() }
        return stream
    }

    /// Ends every stream (a consumer's `for await` then ends) and every later one after its
    /// first user: the client closed.
    func finish() {
        let streams = state.withLock { state -> [AsyncStream<User?>.Continuation] in
            state.finished = true
            defer { state.streams = [:] }
            return Array(state.streams.values)
        }
        for stream in streams { stream.finish() }
    }

    deinit {
        // A stream whose continuation is merely released leaves its consumer waiting for ever.
        finish()
    }
}
