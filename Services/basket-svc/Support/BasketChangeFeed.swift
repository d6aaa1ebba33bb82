internal import Dispatch
internal import Foundation
import Logging
internal import PostgreSQL
import RPC
import Synchronization

/// On PostgreSQL, how this replica hears of the basket changes every replica commits: ONE
/// dedicated connection per process that `LISTEN`s on ``BasketStore/changeChannel`` (every
/// change's transaction notifies it with the user id, delivered on commit), on a thread of its
/// own, so neither the event loops nor the database pool ever block on it.
///
/// Each notification becomes ``Event/changed(userID:)``. Whenever the feed starts listening —
/// the first time, and after every reconnection — it reports ``Event/listening``: a change
/// committed while no connection listened was never delivered and cannot be, so the owner
/// must read every watched basket again. A lost connection (a restarted server, a failover, a
/// dropped network) is opened again with exponential backoff.
///
/// Thread-safe (`Sendable`): the stop flag is atomic, the listener's process id behind a
/// `Mutex`; the connection lives on the feed's thread only.
final class BasketChangeFeed: Sendable {
    /// What the feed tells its owner, on the feed's thread; the owner must not block it.
    enum Event: Sendable, Hashable {
        /// The basket of `userID` changed, on some replica (this one included).
        case changed(userID: String)
        /// The feed is listening again (or for the first time): changes made meanwhile may
        /// have been missed.
        case listening
    }

    /// How the feed waits.
    struct Timing: Sendable {
        /// The longest a wait for notifications lasts before the thread checks whether it
        /// must stop: the bound on how long stopping takes.
        var pollInterval: Duration = .milliseconds(250)
        /// The pause before the first reconnection attempt; doubled per failed attempt.
        var firstRetryDelay: Duration = .milliseconds(100)
        /// The longest pause between reconnection attempts.
        var maxRetryDelay: Duration = .seconds(5)
    }

    private let url: String
    private let password: String?
    private let channel: String
    private let timing: Timing
    private let logger: Logger
    private let deliver: @Sendable (Event) -> Void
    /// Set once the feed must end.
    private let stopRequested = Atomic<Bool>(false)
    /// Signalled by ``stop()``: ends a pause between reconnection attempts early.
    private let wakeUp = DispatchSemaphore(value: 0)
    /// The server process id of the listening connection; nil while none listens.
    private let listener = Mutex<Int32?>(nil)

    /// A feed of `channel` on the PostgreSQL database at `url` (its password `password`,
    /// else libpq's sources), telling `deliver` of each event. Nothing connects before
    /// ``run()``.
    init(
        url: String, password: String?, channel: String, timing: Timing = Timing(), logger: Logger,
        deliver: @escaping @Sendable (Event) -> Void
    ) {
        self.url = url
        self.password = password
        self.channel = channel
        self.timing = timing
        self.logger = logger
        self.deliver = deliver
    }

    /// The server process id of the connection listening now; nil while none is (before the
    /// first connection, and between a lost one and its replacement).
    var listenerProcessID: Int32? { listener.withLock { $0 } }

    /// Listens, on a thread of its own, until the calling task is cancelled; then ends the
    /// thread and its connection, and returns once they are gone. A companion of the server.
    func run() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (finished: CheckedContinuation<Void, Never>) in
                let thread = Thread { [self] in
                    follow()
                    finished.resume()
                }
                thread.name = "basket-changes"
                thread.start()
            }
        } onCancel: {
            stop()
        }
    }

    /// Asks the thread to end: within ``Timing/pollInterval`` when listening, at once when
    /// pausing before a reconnection.
    private func stop() {
        stopRequested.store(true, ordering: .sequentiallyConsistent)
        wakeUp.signal()
    }

    private var isStopping: Bool { stopRequested.load(ordering: .sequentiallyConsistent) }

    /// The thread's loop: connect and listen, deliver what arrives, and on a lost connection
    /// pause (growing with each failed attempt) and start again — until stopped.
    private func follow() {
        var failures = 0
        while !isStopping {
            do {
                let connection = try PostgreSQLConnection(url: url, password: password)
                try connection.listen(channel)
                listener.withLock { $0 = connection.backendProcessID }
                if failures > 0 { logger.notice("listening for basket changes again") }
                failures = 0
                deliver(.listening)
                while !isStopping {
                    for notification in try connection.waitForNotifications(timeout: timing.pollInterval)
                    where notification.channel == channel {
                        deliver(.changed(userID: notification.payload))
                    }
                }
            } catch {
                listener.withLock { $0 = nil }
                failures += 1
                let delay = Duration.exponentialBackoff(
                    initial: timing.firstRetryDelay, multiplier: 2, step: failures, cap: timing.maxRetryDelay)
                logger.warning(
                    "not listening for basket changes; watchers will be brought up to date once it listens again",
                    metadata: ["error": "\(error)", "retry-in": "\(delay)"])
                pause(delay)
            }
        }
        listener.withLock { $0 = nil }
    }

    /// Waits `delay`, or less when ``stop()`` is called meanwhile.
    private func pause(_ delay: Duration) {
        let (seconds, attoseconds) = delay.components
        let nanoseconds = Int(clamping: seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        _ = wakeUp.wait(timeout: .now() + .nanoseconds(nanoseconds))
    }
}
