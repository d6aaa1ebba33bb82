import Contracts
import Foundation
import RPC
import ServiceKit
import Storage
import JSON

/// The answer PlaceOrder gave to an idempotency key: the order, or the error.
struct StoredAnswer: Codable, Sendable, Hashable {
    /// The order answered, on success.
    var order: Order?
    /// The error answered, on failure.
    var error: StoredError?

    /// The answer as what the handler returns or throws.
    func replay() throws -> Order {
        if let order { return order }
        let error = error ?? StoredError(code: RPCCode.internal.rawValue, reason: nil, message: "Internal error.", details: nil)
        throw RPCError(
            code: RPCCode(rawValue: error.code) ?? .internal, reason: error.reason, message: error.message,
            details: error.details)
    }
}

/// An `RPCError` as stored for replay.
struct StoredError: Codable, Sendable, Hashable {
    var code: Int
    var reason: String?
    var message: String
    var details: JSONValue?

    init(code: Int, reason: String?, message: String, details: JSONValue?) {
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details
    }

    init(_ error: RPCError) {
        self.init(code: error.code.rawValue, reason: error.reason, message: error.message, details: error.details)
    }
}

/// Idempotency keys of PlaceOrder: begun, answered, or freed.
extension OrderStore {
    /// How long an answer is kept (API.md: at least 24 hours).
    static let answerRetention: Int64 = 24 * 3600

    /// What recording a key found.
    enum KeyClaim: Sendable {
        /// The key is new (or its old answer expired): this call does the work.
        case claimed
        /// The key was answered before, for the same request.
        case answered(StoredAnswer)
        /// The key was used for a different request.
        case reused
        /// The first call with this key is still running.
        case inProgress
    }

    /// Records `key` for `userID` and `requestHash` in one write transaction, so that of any
    /// number of concurrent calls with the key — on any replica — exactly one is `.claimed`.
    ///
    /// SQLite's `BEGIN IMMEDIATE` runs the claims one after another. On PostgreSQL they run
    /// at once at `SERIALIZABLE`: all but one of those that found no row lose a serialization
    /// conflict (the `(user_id, key)` primary key turns a racing insert into one, see below)
    /// and are re-run, now finding the winner's row: `.inProgress`, or its answer.
    ///
    /// A key still running without an order whose claimant is gone (a replica that died
    /// between claiming it and writing the order, ``ownerGone(_:touched:dialect:)``) is taken
    /// over here at once: its call can never go on.
    func claim(userID: String, key: String, requestHash: String, now: Int64 = Timestamp.now()) async throws -> KeyClaim {
        let replicaID = replicaID
        return try await database.write { connection in
            if let row = try connection.queryOne(
                """
                SELECT request_hash, state, answer_json, created_at,
                    (order_id IS NULL AND \(Self.ownerGone("claimed_by", touched: "created_at", dialect: connection.dialect)))
                FROM idempotency_keys WHERE user_id = ? AND key = ?
                """,
                [now - Self.goneOwnerGrace, userID, key])
            {
                let created = try row.value(at: 3, as: Int64.self)
                let abandoned = try row.value(at: 4, as: Bool?.self) ?? false
                if now - created <= Self.answerRetention && !abandoned {
                    guard try row.value(at: 0, as: String.self) == requestHash else { return .reused }
                    guard try row.value(at: 1, as: String.self) == "done", let json = try row.value(at: 2, as: String?.self)
                    else { return .inProgress }
                    return .answered(try JSONCodec.shared.decode(StoredAnswer.self, from: Data(json.utf8)))
                }
                try connection.execute("DELETE FROM idempotency_keys WHERE user_id = ? AND key = ?", [userID, key])
            }
            // A row a concurrent claim committed after this transaction's snapshot is invisible
            // to the read above; PostgreSQL reports meeting it here as a serialization failure
            // (re-run), not as a unique violation. Nothing inserted can only mean the key is taken.
            let inserted = try connection.execute(
                """
                INSERT INTO idempotency_keys (user_id, key, request_hash, state, created_at, claimed_by)
                VALUES (?, ?, ?, 'running', ?, ?)
                ON CONFLICT (user_id, key) DO NOTHING
                """,
                [userID, key, requestHash, now, replicaID])
            return inserted == 1 ? .claimed : .inProgress
        }
    }

    /// Stores the answer of a key and, when given, moves its order to `step`/`status`, or
    /// removes the pending order `removingOrder` — in one transaction, so the answer and the
    /// order never disagree. With an order, the key is answered only if it still belongs to
    /// that order (a retry may have claimed it anew).
    func answer(
        userID: String, key: String, with answer: StoredAnswer, orderID: String? = nil, step: String? = nil,
        status: OrderStatus? = nil, removingOrder: String? = nil, now: Int64 = Timestamp.now()
    ) async throws {
        let json = try Self.json(answer)
        let owner = orderID ?? removingOrder
        let replicaID = replicaID
        try await database.write { connection in
            try connection.execute(
                """
                UPDATE idempotency_keys SET state = 'done', answer_json = ?
                WHERE user_id = ? AND key = ? AND (CAST(? AS TEXT) IS NULL OR order_id = ?)
                """, [json, userID, key, owner, owner])
            if let orderID, let step {
                try Self.advance(orderID, to: step, status: status, owner: replicaID, now: now, on: connection)
            }
            if let removingOrder {
                try connection.execute("DELETE FROM orders WHERE id = ? AND step IN ('priced', 'reserved')", [removingOrder])
            }
        }
    }

    /// Frees a key whose call failed transiently, unless it was answered meanwhile; returns
    /// whether it freed it.
    @discardableResult
    func free(userID: String, key: String) async throws -> Bool {
        try await database.write { connection in
            try connection.execute(
                "DELETE FROM idempotency_keys WHERE user_id = ? AND key = ? AND state = 'running'", [userID, key]) == 1
        }
    }

    /// Removes the pending order `orderID` that recovery undid, and frees its key if the key
    /// still belongs to it. Only an order still pending (`priced`, `reserved`) is removed.
    func discard(orderID: String, userID: String, key: String) async throws {
        try await database.write { connection in
            try connection.execute(
                "DELETE FROM idempotency_keys WHERE user_id = ? AND key = ? AND order_id = ? AND state = 'running'",
                [userID, key, orderID])
            try connection.execute("DELETE FROM orders WHERE id = ? AND step IN ('priced', 'reserved')", [orderID])
        }
    }

    /// How long a key may stay 'running' without an order before it counts as abandoned: well
    /// beyond the time between claiming a key and writing its order (two upstream calls, each
    /// bounded by the call's deadline or 10 seconds), so a call still working is never robbed.
    static let abandonedKeyAge: Int64 = 15 * 60

    /// Frees the keys left 'running' without an order (claimed at or before `cutoff`) by a
    /// process that ended — a crash between claiming a key and writing the order, or between
    /// removing an undone order and freeing its key — so that the client's retry with the key
    /// starts afresh instead of meeting `REQUEST_IN_PROGRESS` for a day. Keys with an order
    /// are recovery's. Returns how many were freed.
    /// On PostgreSQL, also the keys of any age whose claimant is gone
    /// (``ownerGone(_:touched:dialect:)``).
    @discardableResult
    func freeAbandonedKeys(claimedBy cutoff: Int64, now: Int64 = Timestamp.now()) async throws -> Int {
        try await database.write { connection in
            try connection.execute(
                """
                DELETE FROM idempotency_keys WHERE state = 'running'
                    AND (created_at <= ? OR \(Self.ownerGone("claimed_by", touched: "created_at", dialect: connection.dialect)))
                    AND (order_id IS NULL OR order_id NOT IN (SELECT id FROM orders))
                """, [cutoff, now - Self.goneOwnerGrace])
        }
    }

    /// The keys a crash may have left, as the process sees them when it starts (before serving)
    /// or later: on SQLite, at start-up, every key (one process owns the file, and none of its
    /// calls has claimed a key yet); otherwise only keys older than ``abandonedKeyAge``, since
    /// other replicas' calls (or this process's) may be working under younger ones.
    func abandonedKeyCutoff(atStartUp: Bool, now: Int64 = Timestamp.now()) -> Int64 {
        atStartUp && database.dialect == .sqlite ? now : now - Self.abandonedKeyAge
    }

    /// Drops keys past retention: answered ones, and ones left 'running' (a crash, or a failed
    /// ``free(userID:key:)``) unless an unfinished order still needs its answer stored — those
    /// would otherwise stay for good (a claim past retention replaces them anyway).
    func pruneAnswers(now: Int64 = Timestamp.now()) async throws {
        try await database.write { connection in
            try connection.execute(
                """
                DELETE FROM idempotency_keys WHERE created_at < ? AND (
                    state = 'done' OR order_id IS NULL
                    OR order_id NOT IN (SELECT id FROM orders WHERE step <> 'done'))
                """, [now - Self.answerRetention])
        }
    }
}
