import Foundation
import ServiceTestSupport
import Testing

/// order-svc's `order.sqlite`, read and written from outside through the `sqlite3` shell, the
/// way an operator would: to count the test processor's charges, and to plant the rows a crash
/// leaves behind.
struct OrderDatabase: Sendable {
    /// The database file.
    let path: String

    /// The database in `stack`'s order-svc data directory.
    init(_ stack: OrderStack) {
        path = stack.dataDirectory(.order).appendingPathComponent("order.sqlite").path
    }

    /// Runs `sql` and returns its rows, each a list of column texts (`|`-separated output).
    func rows(_ sql: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [[String]] {
        let output = try await run(sql, sourceLocation: sourceLocation)
        return output.split(separator: "\n", omittingEmptySubsequences: true).map {
            $0.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        }
    }

    /// The single integer `sql` selects.
    func integer(_ sql: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> Int {
        let text = try await run(sql, sourceLocation: sourceLocation).trimmingCharacters(in: .whitespacesAndNewlines)
        return try #require(Int(text), "\(sql) answered \(text)", sourceLocation: sourceLocation)
    }

    /// Runs statements that change the database (only while order-svc is not running).
    func execute(_ sql: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        _ = try await run(sql, sourceLocation: sourceLocation)
    }

    /// How many charges the test processor's ledger holds.
    func chargeCount() async throws -> Int { try await integer("SELECT count(*) FROM test_charges") }

    /// The ledger status of the charge of `orderID` (`charged`, `declined`, `refunded`), nil when none.
    func chargeStatus(of orderID: String) async throws -> String? {
        try await rows("SELECT status FROM test_charges WHERE order_id = \(Self.quote(orderID))").first?.first
    }

    /// How many rows `orders` holds, whatever their step.
    func orderRowCount() async throws -> Int { try await integer("SELECT count(*) FROM orders") }

    /// `text` as an SQL string literal.
    static func quote(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }

    /// Runs the shell with a 5-second busy timeout (order-svc may be writing) and returns its
    /// standard output; a non-zero exit is a failure carrying the shell's complaint.
    private func run(_ sql: String, sourceLocation: SourceLocation) async throws -> String {
        let result = try await Command.run(
            "sqlite3", ["-batch", "-cmd", ".timeout 5000", path, sql], timeout: .seconds(30))
        try #require(result.status == 0, "sqlite3 \(sql) failed: \(result.errors)", sourceLocation: sourceLocation)
        return result.output
    }
}
