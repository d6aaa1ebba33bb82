import Foundation
import ServiceTestSupport
import Testing

/// order-svc's database, read and written from outside the way an operator would: through the
/// `sqlite3` shell on `order.sqlite`, or through `psql` in the schema `orders` of the stack's
/// PostgreSQL database when the suites run there (``TestBackend``). To count the test
/// processor's charges, and to plant the rows a crash leaves behind. (``catalog(of:)`` is
/// catalog-svc's, for the tests that edit the catalog behind its back.)
struct OrderDatabase: Sendable {
    /// The stack whose service's database this is.
    let stack: OrderStack
    /// The service's SQLite file in its data directory.
    let fileName: String
    /// The service's schema in the stack's PostgreSQL database.
    let schema: String
    /// The service.
    let service: ServiceName

    /// The database of `stack`'s order-svc.
    init(_ stack: OrderStack) {
        self.init(stack, service: .order, fileName: "order.sqlite", schema: "orders")
    }

    /// The database of `stack`'s catalog-svc.
    static func catalog(of stack: OrderStack) -> OrderDatabase {
        OrderDatabase(stack, service: .catalog, fileName: "catalog.sqlite", schema: "catalog")
    }

    /// The database of `stack`'s `service`, kept in `fileName` or `schema`.
    private init(_ stack: OrderStack, service: ServiceName, fileName: String, schema: String) {
        self.stack = stack
        self.service = service
        self.fileName = fileName
        self.schema = schema
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

    /// What the database holds, to search for what must never be stored, by where it is: on
    /// SQLite the bytes of each `order.sqlite*` file (leftovers of deleted rows and the WAL
    /// included); on PostgreSQL every row of every table of the schema, as text.
    func storedContents() async throws -> [(place: String, bytes: Data)] {
        guard try await stack.databaseURL() != nil else {
            let directory = stack.dataDirectory(service)
            return try FileManager.default.contentsOfDirectory(atPath: directory.path)
                .filter { $0.hasPrefix(fileName) }
                .map { ($0, try Data(contentsOf: directory.appendingPathComponent($0))) }
        }
        var contents: [(place: String, bytes: Data)] = []
        for table in try await rows("SELECT tablename FROM pg_tables WHERE schemaname = \(Self.quote(schema))").compactMap(\.first) {
            contents.append((table, Data(try await run("SELECT t::text FROM \(table) t", sourceLocation: #_sourceLocation).utf8)))
        }
        return contents
    }

    /// `text` as an SQL string literal.
    static func quote(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }

    /// The `sequence` of an order planted by a statement: as order-svc computes it (see
    /// `OrderStore.nextSequence`) on the backend the stack runs on.
    func nextSequence() async throws -> String {
        try await stack.databaseURL() == nil ? "(SELECT coalesce(max(sequence), 0) + 1 FROM orders)" : "DEFAULT"
    }

    /// Runs `sql` through the shell of the stack's backend and returns its standard output
    /// (rows `|`-separated, no headers); a non-zero exit is a failure carrying the shell's
    /// complaint. sqlite3 waits up to 5 seconds for order-svc's write lock; psql stops at the
    /// first error and runs `sql` as one transaction.
    private func run(_ sql: String, sourceLocation: SourceLocation) async throws -> String {
        let result: Command.Result
        if let url = try await stack.databaseURL() {
            result = try await Command.run(
                "psql",
                [
                    "--no-psqlrc", "--quiet", "--no-align", "--tuples-only", "--field-separator=|",
                    "--set=ON_ERROR_STOP=1", "--single-transaction", "--dbname=\(url)",
                    "--command=SET search_path TO \(schema)", "--command=\(sql)",
                ], timeout: .seconds(30))
        } else {
            let path = stack.dataDirectory(service).appendingPathComponent(fileName).path
            result = try await Command.run("sqlite3", ["-batch", "-cmd", ".timeout 5000", path, sql], timeout: .seconds(30))
        }
        try #require(result.status == 0, "\(sql) failed: \(result.errors)", sourceLocation: sourceLocation)
        return result.output
    }
}
