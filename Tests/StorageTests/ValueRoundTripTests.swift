import Foundation
import Storage
import Testing

/// Binding Swift values to parameters and decoding them from columns.
@Suite("Binding and decoding")
struct ValueRoundTripTests {
    /// A database with one untyped column, so that every value keeps its storage class.
    private func database() async throws -> Database {
        try await Database(path: ":memory:", migrations: [Migration("create v", sql: "CREATE TABLE v (x)")])
    }

    /// Stores `value` and reads it back, decoded as `T`.
    private func roundTrip<T: DatabaseValueConvertible>(_ value: T) async throws -> T {
        let database = try await database()
        do {
            try await database.write { try $0.execute("INSERT INTO v (x) VALUES (?)", [value]) }
            let decoded = try await database.read { connection in
                try #require(try connection.queryValue("SELECT x FROM v", as: T.self))
            }
            await database.close()
            return decoded
        } catch {
            await database.close()
            throw error
        }
    }

    @Test("integers round-trip", arguments: [0, 1, -1, 42, Int.max, Int.min])
    func integers(value: Int) async throws {
        #expect(try await roundTrip(value) == value)
        #expect(try await roundTrip(Int64(value)) == Int64(value))
    }

    @Test("doubles round-trip", arguments: [0.0, -1.5, Double.pi, 1e300, -1e-300, Double.infinity])
    func doubles(value: Double) async throws {
        #expect(try await roundTrip(value) == value)
    }

    @Test("Booleans round-trip as 1 and 0", arguments: [true, false])
    func booleans(value: Bool) async throws {
        #expect(try await roundTrip(value) == value)
        #expect(try await roundTrip(value.databaseValue) == .integer(value ? 1 : 0))
    }

    @Test(
        "text round-trips, unicode included",
        arguments: ["", "plain", "naïve café", "日本語のテキスト", "family 👩‍👩‍👧 flag 🇫🇷", "quote ' and \""])
    func text(value: String) async throws {
        let decoded = try await roundTrip(value)
        #expect(decoded == value)
        #expect(Array(decoded.utf8) == Array(value.utf8))
    }

    @Test("text with an embedded NUL keeps every byte")
    func textWithNul() async throws {
        let value = "before\u{0}after"
        #expect(Array(try await roundTrip(value).utf8) == Array(value.utf8))
    }

    @Test("blobs round-trip, empty and binary included", arguments: [[], [0], [0, 1, 255, 0]] as [[UInt8]])
    func blobs(value: [UInt8]) async throws {
        #expect(try await roundTrip(value) == value)
        #expect(try await roundTrip(Data(value)) == Data(value))
        #expect(try await roundTrip(DatabaseValue.blob(value)) == .blob(value))
    }

    @Test("every byte value and a large random blob round-trip")
    func largeBlobs() async throws {
        let everyByte = [UInt8](0...255)
        #expect(try await roundTrip(everyByte) == everyByte)
        var generator = SystemRandomNumberGenerator()
        let random = (0..<200_000).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        #expect(try await roundTrip(random) == random)
    }

    @Test("nil binds NULL and decodes as nil of any optional type")
    func nulls() async throws {
        let database = try await database()
        let none: String? = nil
        try await database.write { try $0.execute("INSERT INTO v (x) VALUES (?), (?)", [nil, none]) }
        let rows = try await database.read { try $0.query("SELECT x FROM v") }
        #expect(rows.count == 2)
        for row in rows {
            #expect(row[0] == .null)
            #expect(try row.value(at: 0, as: Int?.self) == nil)
            #expect(try row.value(at: 0, as: String?.self) == nil)
            #expect(try row.value(at: 0, as: [UInt8]?.self) == nil)
            #expect(try row.value(at: 0, as: Data?.self) == nil)
            #expect(try row.value(at: 0, as: Bool?.self) == nil)
            let error = try #require(throws: StorageError.self) { try row.value(at: 0, as: Int.self) }
            #expect(error.isTypeMismatch)
        }
        #expect(try await roundTrip(Optional(7)) == 7)
        await database.close()
    }

    @Test("columns decode by index and by case-insensitive name")
    func columnsByIndexAndName() async throws {
        let database = try await database()
        let row = try await database.read { connection in
            try #require(try connection.queryOne("SELECT 1 AS id, 'ada' AS Name, 2.5 AS score, x'00ff' AS raw, NULL AS gone"))
        }
        #expect(row.columnNames == ["id", "Name", "score", "raw", "gone"])
        #expect(try row.value(at: 0, as: Int.self) == 1)
        #expect(try row.value(named: "name", as: String.self) == "ada")
        #expect(try row.value(named: "NAME", as: String.self) == "ada")
        #expect(try row.value(named: "score", as: Double.self) == 2.5)
        #expect(try row.value(named: "raw", as: [UInt8].self) == [0, 255])
        #expect(try row.value(named: "gone", as: String?.self) == nil)
        #expect(try row.value(named: "id", as: Double.self) == 1.0)
        #expect(row["score"] == .real(2.5))
        #expect(row["missing"] == nil)
        await database.close()
    }

    @Test("decoding the wrong type, a missing column or an index out of range throws StorageError")
    func decodingErrors() async throws {
        let database = try await database()
        let row = try await database.read { try #require(try $0.queryOne("SELECT 'text' AS t")) }
        let wrongType = try #require(throws: StorageError.self) { try row.value(named: "t", as: Int.self) }
        #expect(wrongType.isTypeMismatch)
        #expect(wrongType.message.contains("TEXT"))
        let missing = try #require(throws: StorageError.self) { try row.value(named: "nope", as: String.self) }
        #expect(missing.isMisuse)
        let outOfRange = try #require(throws: StorageError.self) { try row.value(at: 3, as: String.self) }
        #expect(outOfRange.isMisuse)
        await database.close()
    }

    @Test("the wrong number of bindings is refused before running")
    func bindingCountMismatch() async throws {
        let database = try await database()
        let error = try await #require(throws: StorageError.self) {
            try await database.write { try $0.execute("INSERT INTO v (x) VALUES (?)", [1, 2]) }
        }
        #expect(error.isMisuse)
        #expect(error.sql == "INSERT INTO v (x) VALUES (?)")
        await database.close()
    }

    @Test("values of several types bind in one statement")
    func mixedBindings() async throws {
        let database = try await database()
        let values: [(any DatabaseValueConvertible)?] = [7, Int64(8), 9.5, "nine", [UInt8]([9]), Data([10]), true, nil]
        let row = try await database.read { connection in
            try #require(try connection.queryOne("SELECT ?, ?, ?, ?, ?, ?, ?, ?", values))
        }
        #expect(row.values == [.integer(7), .integer(8), .real(9.5), .text("nine"), .blob([9]), .blob([10]), .integer(1), .null])
        await database.close()
    }
}
