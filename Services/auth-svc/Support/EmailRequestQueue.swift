/// The emails a caller may ask for by address alone — a password reset, a new verification
/// link — handled after the call is answered, so that the answer takes as long whether or
/// not the address has an account (issue 25: the lookup's write told them apart by timing).
///
/// The handler only validates the address, applies the per-address rate limit and queues the
/// request (``submit(_:)``); ``run(handling:)``, a companion of the server, looks the address
/// up and queues the email, a little later (`settle`), once the answer has left. At most `capacity` requests wait; beyond that a request is dropped
/// (the caller has had its `{}` either way and may ask again), so memory stays bounded.
/// Requests still waiting when the server stops are dropped likewise.
///
/// Thread-safe: an `AsyncStream` continuation may be yielded to from any thread.
final class EmailRequestQueue: Sendable {
    /// One request for an email.
    struct Request: Sendable, Equatable {
        /// What the email is for.
        enum Kind: Sendable, Equatable {
            /// `RequestPasswordReset`: a reset link, if the address has an account.
            case passwordReset
            /// `ResendVerification`: a verification link, if the address has an unverified account.
            case verification
        }

        /// What is asked for.
        let kind: Kind
        /// The normalized address it is asked for.
        let email: String
        /// When it was queued.
        var queuedAt = ContinuousClock.now

        /// Compares what is asked for, not when.
        static func == (lhs: Request, rhs: Request) -> Bool { lhs.kind == rhs.kind && lhs.email == rhs.email }
    }

    /// Requests that may wait before new ones are dropped.
    let capacity: Int
    /// How long after it was queued a request is handled at the earliest: long enough for the
    /// answer to have left, so the lookup and the write for an existing account do not share
    /// the cores with the answer they would otherwise slow.
    let settle: Duration
    private let requests: AsyncStream<Request>
    private let continuation: AsyncStream<Request>.Continuation

    /// A queue of at most `capacity` waiting requests, each handled `settle` after it came at
    /// the earliest.
    init(capacity: Int = 1024, settle: Duration = .milliseconds(20)) {
        self.capacity = capacity
        self.settle = settle
        (requests, continuation) = AsyncStream.makeStream(of: Request.self, bufferingPolicy: .bufferingOldest(capacity))
    }

    /// Queues `request` without waiting for anything; false when the queue was full (or has
    /// ended) and the request was dropped.
    @discardableResult
    func submit(_ request: Request) -> Bool {
        if case .enqueued = continuation.yield(request) { return true }
        return false
    }

    /// Hands the requests to `handling`, one at a time in the order they came and each `settle`
    /// after it came at the earliest, until the calling task is cancelled; then ends the queue
    /// (later requests are dropped). Call once.
    func run(handling: (Request) async -> Void) async {
        await withTaskCancellationHandler {
            for await request in requests {
                if ContinuousClock.now < request.queuedAt + settle {
                    try? await Task.sleep(until: request.queuedAt + settle)
                }
                if Task.isCancelled { break }
                await handling(request)
            }
        } onCancel: {
            continuation.finish()
        }
    }
}
