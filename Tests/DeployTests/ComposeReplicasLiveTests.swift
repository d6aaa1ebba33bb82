import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// deploy/compose with PostgreSQL and replicas, and its backups: `up --postgres` runs a local
/// cluster and two replicas of every service, a replica killed under load costs only the calls
/// it had in flight, and a backup taken under write load and restored holds every write
/// acknowledged before it began — on SQLite and on PostgreSQL.
@Suite("deploy/compose with replicas and backups", .serialized)
struct ComposeReplicasLiveTests {
    /// A base for compose's ports (base + 11 … base + 42, base + 432, base + 1080) below
    /// Linux's ephemeral range, away from the other suites' random ports as far as chance goes.
    static func portBase() -> Int { 20_000 + Int.random(in: 0..<90) * 100 }

    /// The gateway's per-client rate limit off: the write load is one client writing flat out.
    static let unlimited = ["SHOP_GATEWAY_RATE_LIMIT": "0"]

    @Test("up --postgres: two replicas of each service on a local cluster; a replica killed under load costs no acknowledged write; down stops the cluster")
    func replicasOnPostgreSQL() async throws {
        let base = Self.portBase()
        try await withComposeSystem(environment: Self.unlimited, portBase: base, slots: 10) { system in
            let up = try await system.run("up", "--postgres", timeout: .seconds(300))
            try #require(up.status == 0, "up --postgres failed: \(up)")
            let rows = try await system.status()
            let replicated = system.services.filter { $0 != "gateway" }
            let expected = replicated.flatMap { ["\($0)@1", "\($0)@2"] } + ["gateway"]
            #expect(rows.map(\.name) == expected)
            #expect(rows.allSatisfy { $0.status == "serving" }, "\(rows)")
            #expect(try system.row("catalog-svc@2", in: rows).address == "127.0.0.1:\(base + 22)")
            #expect(up.output.contains("postgresql") && up.output.contains("127.0.0.1:\(base + 432)"), "\(up.output)")
            // Both replicas of a service are given to those that call it.
            let gatewayArguments = ComposeLiveTests.commandLine(of: try #require(try system.row("gateway", in: rows).pid))
            let catalogFlag = try #require(gatewayArguments.firstIndex(of: "--catalog-addr"))
            #expect(gatewayArguments[catalogFlag + 1] == "127.0.0.1:\(base + 21),127.0.0.1:\(base + 22)")

            let shop = try ComposeShop(system: system)
            defer { Task { await shop.close() } }
            let load = WriteLoad(shop: shop)
            let running = Task { await load.run() }
            // One replica of each service in turn, killed outright while the load runs.
            for name in replicated {
                try await Task.sleep(for: .milliseconds(700))
                let victim = try #require(try system.row("\(name)@1", in: try await system.status()).pid)
                kill(Int32(victim), SIGKILL)
            }
            try await Task.sleep(for: .milliseconds(700))
            load.stop()
            await running.value
            let outcome = load.outcome
            #expect(outcome.acknowledged.count > 20, "the load made too few writes: \(outcome)")
            // Only calls in flight on a killed replica may fail: one per kill at most with one
            // writer, and none after the kills.
            #expect(outcome.failures.count <= replicated.count, "\(outcome.failures)")
            for id in outcome.acknowledged {
                #expect(try await shop.product(id)?.id == id, "acknowledged product \(id) is missing")
            }
            // The supervisors brought the killed replicas back.
            #expect(await eventually(within: .seconds(30)) { ((try? await system.status()) ?? []).allSatisfy { $0.status == "serving" } })

            let down = try await system.run("down", timeout: .seconds(120))
            #expect(down.status == 0 && down.output.contains("stopped postgresql"), "\(down)")
            #expect(!FileManager.default.fileExists(atPath: system.data.appendingPathComponent("postgres/data/postmaster.pid").path))
        }
    }

    @Test("replicas need PostgreSQL: SHOP_REPLICAS=2 on SQLite, or a bad count, is refused")
    func replicasNeedPostgreSQL() async throws {
        try await withComposeSystem(environment: ["SHOP_REPLICAS": "2"], portBase: Self.portBase()) { system in
            let refused = try await system.run("up")
            #expect(refused.status == 2 && refused.errors.contains("needs PostgreSQL"), "\(refused)")
        }
        try await withComposeSystem(environment: ["SHOP_REPLICAS": "12"], portBase: Self.portBase()) { system in
            let refused = try await system.run("up", "--postgres")
            #expect(refused.status == 2 && refused.errors.contains("1–9"), "\(refused)")
        }
    }

    @Test("a running system keeps its mode: up --postgres beside a SQLite one is refused until down")
    func runningModeIsKept() async throws {
        try await withComposeSystem(portBase: Self.portBase()) { system in
            let up = try await system.run("up")
            try #require(up.status == 0, "up failed: \(up)")
            let other = try await system.run("up", "--postgres")
            #expect(other.status == 2 && other.errors.contains("down first"), "\(other)")
            #expect(try await system.status().map(\.name) == system.services, "the refused up changed what status lists")
            #expect(try await system.run("up").status == 0, "up in the same mode is refused")
        }
    }

    @Test("a backup taken under write load, restored, holds every write acknowledged before it began", arguments: [false, true])
    func backupUnderLoad(postgres: Bool) async throws {
        try await withComposeSystem(environment: Self.unlimited, portBase: Self.portBase(), slots: postgres ? 10 : 5) { system in
            let upArguments = postgres ? ["up", "--postgres"] : ["up"]
            let up = try await system.run(arguments: upArguments, timeout: .seconds(300))
            try #require(up.status == 0, "up failed: \(up)")
            let shop = try ComposeShop(system: system)
            let load = WriteLoad(shop: shop)
            let running = Task { await load.run() }
            try await Task.sleep(for: .seconds(1))
            let before = load.outcome.acknowledged
            let backupDirectory = system.scratch.appendingPathComponent("backup")
            let backup = try await system.run("backup", backupDirectory.path, timeout: .seconds(120))
            try #require(backup.status == 0, "backup failed: \(backup)")
            load.stop()
            await running.value
            // Made after the backup: a restore that really restores loses it.
            let after = try await shop.createProduct(title: "made after the backup")
            await shop.close()

            let refused = try await system.run("restore", backupDirectory.path)
            #expect(refused.status != 0 && refused.errors.contains("down first"), "\(refused)")
            #expect(try await system.run("down", timeout: .seconds(120)).status == 0)
            if !postgres {
                try FileManager.default.removeItem(at: system.data.appendingPathComponent("catalog-svc/catalog.sqlite"))
            }
            let restore = try await system.run("restore", backupDirectory.path, timeout: .seconds(120))
            try #require(restore.status == 0, "restore failed: \(restore)")
            let again = try await system.run(arguments: upArguments, timeout: .seconds(300))
            try #require(again.status == 0, "up after the restore failed: \(again)")
            let restored = try ComposeShop(system: system)
            defer { Task { await restored.close() } }
            #expect(before.count > 5, "the load made too few writes before the backup")
            for id in before {
                #expect(try await restored.product(id)?.id == id, "product \(id), acknowledged before the backup, is missing")
            }
            #expect(try await restored.product(after.id) == nil, "the restore kept a product made after the backup")
        }
    }
}

/// The shop compose runs, reached through its gateway with the admin key.
struct ComposeShop: Sendable {
    let client: RPCClient
    let adminKey: String

    init(system: ComposeSystem) throws {
        client = try RPCClient(target: SocketAddressText(host: "127.0.0.1", port: system.ports["gateway"] ?? 0))
        adminKey = try String(contentsOf: system.data.appendingPathComponent("admin-api-key"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Creates a product with `stock` units (admin `UpsertProduct`) and returns it with its id.
    func createProduct(title: String, stock: Int = 5) async throws -> Product {
        let product = Product(
            title: title, description: "Written by the deploy tests.", category: "test goods",
            price: Money(amount: 990, currency: "USD"), image: "https://img.shop.test/p.png", rating: Rating(rate: 4, count: 1),
            stock: stock)
        return try await client.unary(
            CatalogContract.upsertProduct, UpsertProductRequest(product: product),
            options: CallOptions(metadata: [MetadataKey.apiKey: adminKey], timeout: .seconds(10))
        ).product
    }

    /// Product `id`, or nil when the catalog has none.
    func product(_ id: Int) async throws -> Product? {
        do {
            return try await client.unary(
                CatalogContract.getProduct, GetProductRequest(id: id), options: CallOptions(timeout: .seconds(10))
            ).product
        } catch let error as RPCError where error.code == .notFound {
            return nil
        }
    }

    func close() async { await client.close() }
}

/// One writer creating products one after another until stopped, recording which were
/// acknowledged and which calls failed.
final class WriteLoad: Sendable {
    struct Outcome: Sendable, CustomStringConvertible {
        var acknowledged: [Int] = []
        var failures: [String] = []
        var description: String { "\(acknowledged.count) acknowledged, failures: \(failures)" }
    }

    let shop: ComposeShop
    private let state = Mutex(Outcome())
    private let stopped = Atomic<Bool>(false)

    init(shop: ComposeShop) { self.shop = shop }

    /// What happened so far.
    var outcome: Outcome { state.withLock { $0 } }

    func stop() { stopped.store(true, ordering: .relaxed) }

    func run() async {
        var index = 0
        while !stopped.load(ordering: .relaxed) {
            index += 1
            do {
                let product = try await shop.createProduct(title: "load product \(index)")
                state.withLock { $0.acknowledged.append(product.id) }
            } catch {
                state.withLock { $0.failures.append("\(error)") }
            }
        }
    }
}
