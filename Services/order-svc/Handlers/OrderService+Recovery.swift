import Contracts
import Logging
import RPC
import ServiceKit
import Synchronization

/// The recovery pass (README): finishes or undoes every order a crash, or an upstream outage,
/// left between steps. Runs at start-up and every 30 seconds on every replica; orders a call in
/// this process is working on are left alone, and each order is settled only under this
/// process's lease on it (`OrderStore+Leases.swift`), so no two replicas drive one order.
extension OrderService {
    /// The steps recovery acts on.
    static let unfinishedSteps = ["priced", "reserved", "charged", "declined", "cancelling"]

    /// One pass over the unfinished orders; returns how many it settled.
    @discardableResult
    func recover() async -> Int {
        let records: [OrderRecord]
        do {
            records = try await store.ordersToRecover(atSteps: Self.unfinishedSteps)
        } catch {
            logger.error("recovery cannot read orders", metadata: ["error": "\(error)"])
            return 0
        }
        return await recover(listed: records)
    }

    /// Settles the orders of `records`, a list read a moment ago, each by its step as it is now.
    func recover(listed records: [OrderRecord]) async -> Int {
        var settled = 0
        for listed in records {
            let id = listed.order.id
            guard inFlight.claim(id) else { continue }
            defer { inFlight.release(id) }
            do {
                // The list is a snapshot: a PlaceOrder or CancelOrder may have finished the order
                // since, and released it just before this claim. Only its step now counts —
                // settling by a stale one would refund, release and delete a paid order. The
                // lease comes with the order as it is now; another replica's live lease leaves
                // the order to that replica.
                guard let record = try await store.claimForRecovery(orderID: id, atSteps: Self.unfinishedSteps) else {
                    continue
                }
                try await settle(record)
                settled += 1
                logger.notice("recovered order", metadata: ["order": "\(id)", "step": "\(record.step)"])
            } catch {
                logger.warning("recovery will retry", metadata: ["order": "\(id)", "error": "\(error)"])
            }
        }
        return settled
    }

    /// Settles one unfinished order according to its step.
    private func settle(_ record: OrderRecord) async throws {
        let id = record.order.id
        switch record.step {
        case "priced", "reserved":
            // Never confirmed to the caller: undo everything; the client's retry starts afresh.
            if record.step == "reserved" { try await payments.refund(orderID: id) }
            try await releaseStock(id, options: recoveryOptions)
            try await store.discard(orderID: id, userID: record.userID, key: record.idempotencyKey)
            metrics.countOrder(.failed)
        case "charged":
            // The money was taken: the order is paid; its answer is the paid order.
            var order = record.order
            order.status = .paid
            order.updatedAt = Timestamp.rfc3339(Timestamp.now())
            try await store.answer(
                userID: record.userID, key: record.idempotencyKey, with: StoredAnswer(order: order), orderID: id,
                step: "done", status: .paid)
            metrics.countOrder(.paid)
        case "declined":
            try await releaseStock(id, options: recoveryOptions)
            try await store.advance(orderID: id, to: "done")
        case "cancelling":
            try await finishCancelling(id, options: recoveryOptions)
        default:
            return
        }
    }

    /// Starts a recovery pass in the background, on PostgreSQL and at most once per
    /// ``RecoveryNudges/spacing``: a call met a key still in progress, whose first call may have
    /// died with another replica (a gone replica's orders are taken over a few seconds after
    /// its death, ``OrderStore/goneOwnerGrace``). On SQLite one process owns the orders, and its
    /// start-up pass took every one a crash left.
    func nudgeRecovery() {
        guard store.sharedByReplicas, recoveryNudges.take() else { return }
        let service = self
        Task { _ = await service.recover() }
    }

    /// Runs `recover()` now and then every `interval` until the calling task is cancelled,
    /// each time also freeing keys left abandoned by a replica that died (one that never
    /// restarts frees none itself) and pruning old answers.
    func runRecovery(every interval: Duration = .seconds(30)) async {
        while !Task.isCancelled {
            await recover()
            _ = try? await store.freeAbandonedKeys(claimedBy: store.abandonedKeyCutoff(atStartUp: false))
            try? await store.pruneAnswers()
            try? await Task.sleep(for: interval)
        }
    }
}

/// When a retry may next start a recovery pass: at most one per ``spacing``, whatever the
/// number of retries waiting. Thread-safe.
final class RecoveryNudges: Sendable {
    /// The least time between two passes started by retries.
    static let spacing: Duration = .seconds(2)
    private let next = Mutex<ContinuousClock.Instant>(.now)

    /// Whether a pass may start now (and then none until ``spacing`` later).
    func take() -> Bool {
        next.withLock { next in
            let now = ContinuousClock.now
            guard now >= next else { return false }
            next = now + Self.spacing
            return true
        }
    }
}
