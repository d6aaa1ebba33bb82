import ContractTesting
import Contracts
import Foundation
import Testing

/// The breaking-change check of the whole API: the canonical description of `Contracts` now
/// against the committed `Tests/Contracts/api-snapshot.json`.
///
/// A break fails with the list of what broke. Additions pass; to record them (or, after a
/// new `vN` package, a break made on purpose) run
/// `CONTRACT_SNAPSHOT_UPDATE=1 swift test --filter APISnapshotTests`.
@Suite("API snapshot")
struct APISnapshotTests {
    /// The committed snapshot.
    static let snapshotURL = ContractFiles.directory.appendingPathComponent("api-snapshot.json")
    /// Whether this run records the snapshot instead of checking it.
    static let updating = ProcessInfo.processInfo.environment["CONTRACT_SNAPSHOT_UPDATE"] == "1"

    @Test("the API has no breaking change against the committed snapshot")
    func noBreakingChange() throws {
        let current = APIDescription.current
        if Self.updating {
            try FileManager.default.createDirectory(at: ContractFiles.directory, withIntermediateDirectories: true)
            try current.canonicalJSON().write(to: Self.snapshotURL, options: .atomic)
            return
        }
        let data = try #require(
            try? Data(contentsOf: Self.snapshotURL),
            "no snapshot at \(Self.snapshotURL.path): record it with CONTRACT_SNAPSHOT_UPDATE=1 swift test --filter APISnapshotTests")
        let snapshot = try JSONDecoder().decode(APIDescription.self, from: data)
        let changes = APICompatibility.changes(from: snapshot, to: current)
        if !changes.breaking.isEmpty {
            let report = """
                The API breaks clients written against Tests/Contracts/api-snapshot.json:
                \(changes.breaking.map { "  - \($0)" }.joined(separator: "\n"))
                API.md: a breaking change needs a new vN package. If this is one, made on purpose, \
                update the snapshot: CONTRACT_SNAPSHOT_UPDATE=1 swift test --filter APISnapshotTests
                """
            Issue.record("\(report)")
        } else if !changes.additions.isEmpty {
            print(
                """
                API snapshot: additive changes only (no break):
                \(changes.additions.map { "  + \($0)" }.joined(separator: "\n"))
                Record them: CONTRACT_SNAPSHOT_UPDATE=1 swift test --filter APISnapshotTests
                """)
        }
    }

    @Test("the committed snapshot is the canonical text of a description")
    func snapshotIsCanonical() throws {
        guard !Self.updating else { return }
        let data = try Data(contentsOf: Self.snapshotURL)
        let snapshot = try JSONDecoder().decode(APIDescription.self, from: data)
        #expect(try snapshot.canonicalJSON() == data, "re-record with CONTRACT_SNAPSHOT_UPDATE=1")
    }

    @Test("every type a field names is a scalar or a described message")
    func everyTypeResolves() {
        #expect(APIDescription.current.unresolvedTypes == [])
    }

    @Test("the description covers every contract's methods and the nested messages")
    func coverage() {
        let current = APIDescription.current
        let methods = Set(current.services.flatMap { service in service.methods.map { "\(service.name)/\($0.name)" } })
        #expect(methods.contains("shop.catalog.v1.CatalogService/GetProduct"))
        #expect(methods.contains("shop.auth.v1.SessionRevocationService/ListRevokedSessions"))
        #expect(methods.count == APIDescription.allMethods.count)
        let messages = Set(current.messages.map(\.name))
        #expect(messages.isSuperset(of: ["Money", "Product", "Rating", "BasketItem", "Order", "OrderItem", "SessionRevocation", "FieldDescriptor"]))
    }

    @Test("the canonical text does not depend on declaration order")
    func canonicalOrder() throws {
        let shuffled = APIDescription(
            methods: APIDescription.allMethods.reversed(), messageTypes: APIDescription.namedMessageTypes)
        #expect(try shuffled.canonicalJSON() == APIDescription.current.canonicalJSON())
    }
}
