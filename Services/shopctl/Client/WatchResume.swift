import Foundation
import RPC

/// How a watch (`basket watch`, `auth watch`) outlives a restart of the gateway or of the
/// service behind it, as a Firestore listener does: it calls the method again, with backoff,
/// and carries on from the fresh snapshot the server sends first.
///
/// Which failures end a watch:
/// - Before its first message a watch is an ordinary call: every failure is reported (after
///   the retries of ``CallRetry/standard(for:)``), so a wrong `--gateway` or a gateway that is
///   down fails at once instead of waiting for ever.
/// - After it, transient failures resume the watch: `UNAVAILABLE` of any reason (the
///   gateway's `UPSTREAM_UNAVAILABLE`, basket-svc's "shutting down; watch again", a refused or
///   dropped connection to the gateway), `DEADLINE_EXCEEDED`, `CANCELLED` that shopctl did
///   not ask for (a server cancelling its streams as it stops), and `RESOURCE_EXHAUSTED`
///   (`RATE_LIMITED`; `TOO_MANY_WATCHES` while the gateway has yet to give back the old
///   stream's place) with a longer backoff.
/// - Every other failure is final and ends the command with its exit status: `UNAUTHENTICATED`
///   (`SESSION_REVOKED`, signed out; an expired access token is refreshed first, as for any
///   call), `SESSION_ENDED` and `NOT_SIGNED_IN` (the credentials are gone), `PERMISSION_DENIED`,
///   `INVALID_ARGUMENT`, `NOT_FOUND`, `FAILED_PRECONDITION`, `ABORTED`, `UNIMPLEMENTED`, and
///   `INTERNAL`, `UNKNOWN`, `DATA_LOSS` (a bug or a broken answer: the same call would fail the
///   same way, and retrying would hide it behind "reconnecting…"), as is a message shopctl
///   cannot read.
/// - A stream the server ends OK ends the watch (exit 0): `WatchAuthState` ends so after
///   `SIGNED_OUT`.
///
/// An outage says ``reconnectingNotice`` once, through ``notice`` (standard error, so `--json`
/// output stays messages only). The backoff grows per failed attempt of the outage and starts
/// again once a new stream delivers its first message. A snapshot identical to the last one
/// delivered is not delivered again — a reconnect's first snapshot usually is one.
struct WatchResume: Sendable {
    /// The backoff after a transient failure, and which failures are transient.
    var backoff: CallRetry
    /// The longer backoff after a limit (`RESOURCE_EXHAUSTED`).
    var limitedBackoff: CallRetry
    /// Waits between attempts (tests make it instant).
    var sleep: @Sendable (Duration) async throws -> Void
    /// Says something about the watch that is not a message (standard error).
    var notice: @Sendable (String) -> Void

    /// What an outage says, once.
    static let reconnectingNotice = "reconnecting…"

    /// A resume with the standard backoffs, saying its notices through `notice` and waiting
    /// with `sleep`.
    init(
        notice: @escaping @Sendable (String) -> Void = { Output.error($0) },
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) {
        // Attempts are unbounded: a watch stops only on a final failure or Ctrl-C.
        backoff = CallRetry(maxAttempts: .max, initialBackoff: .milliseconds(250), maxBackoff: .seconds(5)) {
            [.unavailable, .deadlineExceeded, .cancelled].contains($0.code)
        }
        limitedBackoff = CallRetry(maxAttempts: .max, initialBackoff: .seconds(2), maxBackoff: .seconds(30)) {
            $0.code == .resourceExhausted
        }
        self.sleep = sleep
        self.notice = notice
    }

    /// The backoff to wait after `error` ended a watch that had delivered a message; nil when
    /// `error` is final.
    func reconnectBackoff(after error: any Error) -> CallRetry? {
        guard let error = error as? RPCError else { return nil }
        return [limitedBackoff, backoff].first { $0.isRetryable(error) }
    }

    /// Runs a watch: `connect` opens the stream with the retry it is given (`first` for the
    /// first attempt, none for a reconnect, whose backoff is this loop's) and hands each
    /// message to the closure it gets; each message that differs from the last one goes to
    /// `onSnapshot`. Returns when a stream ends OK; throws a final failure, a failure before
    /// the first message, anything `onSnapshot` throws, and cancellation.
    func run(
        first: CallRetry,
        connect: (_ retry: CallRetry, _ onMessage: (Data) async throws -> Void) async throws -> Void,
        onSnapshot: (Data) async throws -> Void
    ) async throws {
        // Both closures are only called during this function; Swift cannot see that one,
        // called inside the other, does not escape it.
        try await withoutActuallyEscaping(onSnapshot) { onSnapshot in
            try await run(first: first, connect: connect, deliveringTo: onSnapshot)
        }
    }

    /// ``run(first:connect:onSnapshot:)`` with the snapshot handler free to be captured.
    private func run(
        first: CallRetry,
        connect: (_ retry: CallRetry, _ onMessage: (Data) async throws -> Void) async throws -> Void,
        deliveringTo onSnapshot: @escaping (Data) async throws -> Void
    ) async throws {
        var last: Data?
        // Failed attempts of the current outage; 0 while a stream is delivering.
        var failures = 0
        while true {
            var delivered = false
            var snapshotFailure: (any Error)?
            do {
                try await connect(last == nil ? first : .never) { message in
                    if !delivered {
                        delivered = true
                        failures = 0
                    }
                    guard message != last else { return }
                    do {
                        try await onSnapshot(message)
                    } catch {
                        snapshotFailure = error
                        throw error
                    }
                    last = message
                }
                return
            } catch {
                if let snapshotFailure { throw snapshotFailure }
                guard !Task.isCancelled, last != nil, let backoff = reconnectBackoff(after: error) else { throw error }
                if failures == 0 { notice(Self.reconnectingNotice) }
                failures += 1
                try await sleep(backoff.delay(beforeRetry: failures))
            }
        }
    }
}
