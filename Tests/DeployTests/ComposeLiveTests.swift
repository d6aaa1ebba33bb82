import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// deploy/compose against the executables of this build, on ports the kernel picked, with its
/// data in a scratch directory. One system at a time: each is five processes.
@Suite("deploy/compose", .serialized)
struct ComposeLiveTests {
    @Test("up starts every service on the chosen ports; up again starts nothing; down leaves no process")
    func upTwiceThenDown() async throws {
        try await withComposeSystem { system in
            let up = try await system.run("up")
            try #require(up.status == 0, "up failed: \(up)")
            for name in system.services {
                let row = up.output.split(separator: "\n").first { $0.hasPrefix("\(name) ") }
                #expect(row?.contains("127.0.0.1:\(system.ports[name] ?? 0)") == true, "up's table has no address for \(name):\n\(up.output)")
                #expect(row?.hasSuffix("serving") == true, "up's table does not show \(name) serving:\n\(up.output)")
            }

            let rows = try await system.status()
            #expect(rows.map(\.name) == system.services)
            for row in rows {
                #expect(row.status == "serving", "\(row)")
                #expect(row.address == "127.0.0.1:\(system.ports[row.name] ?? 0)", "\(row)")
                let pid = try #require(row.pid, "\(row.name) has no pid")
                #expect(row.supervisorPid != nil && row.restarts == 0, "\(row)")
                // The process is this build's executable, and every upstream it is given
                // follows the ports chosen here.
                let arguments = Self.commandLine(of: pid)
                #expect(arguments.first == ComposeSystem.binDirectory.appendingPathComponent(row.name).path, "\(row.name) runs \(arguments)")
                let help = try await ExecutableHelp.of(row.name)
                for flag in help.flags where flag.hasSuffix("-addr") {
                    let upstream = String(flag.dropFirst(2).dropLast("-addr".count)) + "-svc"
                    let value = arguments.firstIndex(of: flag).map { arguments.index(after: $0) }.flatMap { $0 < arguments.count ? arguments[$0] : nil }
                    #expect(value == "127.0.0.1:\(system.ports[upstream] ?? 0)", "\(row.name) \(flag) is \(value ?? "not given")")
                }
                // The kubelet's probe agrees with compose's health check.
                let probe = try await KubeletProbe.check(host: "127.0.0.1", port: system.ports[row.name] ?? 0)
                #expect(probe == .status(1), "\(row.name): \(probe)")
            }

            try Self.expectFirstRunSummary(up.output, system: system)

            let secrets = Self.secretFiles(of: system)
            let generated = try secrets.map { try Data(contentsOf: $0) }
            #expect(generated.allSatisfy { !$0.isEmpty }, "up left a key file empty")
            #expect(generated[0] != generated[1], "the admin and internal keys are the same")

            let again = try await system.run("up")
            #expect(again.status == 0, "up again failed: \(again)")
            #expect(again.output.contains("NAME") && again.output.contains("serving"), "up again printed no table: \(again.output)")
            let rowsAgain = try await system.status()
            #expect(rowsAgain.map(\.pid) == rows.map(\.pid), "up again started processes: \(rows) → \(rowsAgain)")
            #expect(rowsAgain.map(\.supervisorPid) == rows.map(\.supervisorPid))

            // Generated once: a second up keeps the keys the running services were given.
            #expect(try secrets.map { try Data(contentsOf: $0) } == generated, "up again changed the keys")
            for secret in secrets {
                let attributes = try FileManager.default.attributesOfItem(atPath: secret.path)
                #expect((attributes[.posixPermissions] as? Int) == 0o600, "\(secret.path) is not 0600")
            }

            let pids = rows.flatMap { [$0.pid, $0.supervisorPid] }.compactMap { $0 }
            let down = try await system.run("down")
            #expect(down.status == 0, "down failed: \(down)")
            for name in system.services { #expect(down.output.contains("stopped \(name)"), "down: \(down.output)") }
            for pid in pids { #expect(!Self.isAlive(pid), "process \(pid) is still there after down") }
            // Gracefully: each service drained and its supervisor saw it end, nothing was killed.
            for name in system.services {
                let log = system.log(of: name)
                #expect(log.contains("\(name): stopped") && log.hasSuffix("compose: \(name) stopped\n"), "\(name) did not stop gracefully:\n\(log)")
                #expect(!log.contains("killed"), "\(name) was killed:\n\(log)")
            }
            let left = try await system.processesLeft()
            #expect(left.isEmpty, "pgrep finds processes after down: \(left)")
            let stopped = try await system.status()
            #expect(stopped.allSatisfy { $0.status == "stopped" && $0.pid == nil && $0.supervisorPid == nil }, "\(stopped)")
        }
    }

    @Test("a service killed with SIGKILL is restarted and the restart logged; restart SERVICE replaces it")
    func crashAndRestart() async throws {
        try await withComposeSystem { system in
            let up = try await system.run("up")
            try #require(up.status == 0, "up failed: \(up)")
            let before = try system.row("catalog-svc", in: try await system.status())
            let killed = try #require(before.pid)
            #expect(kill(Int32(killed), SIGKILL) == 0)

            var after = before
            let back = try await eventually(within: .seconds(60), every: .milliseconds(200)) {
                after = try system.row("catalog-svc", in: try await system.status())
                return after.pid != nil && after.pid != killed && after.status == "serving"
            }
            #expect(back, "catalog-svc did not come back: \(after)")
            #expect(after.restarts == 1 && after.supervisorPid == before.supervisorPid, "\(after)")
            let log = system.log(of: "catalog-svc")
            #expect(log.contains("compose: catalog-svc killed by signal KILL; restart 1 in 1s"), "the restart is not logged:\n\(log)")

            let keys = try Self.secretFiles(of: system).map { try Data(contentsOf: $0) }
            let restart = try await system.run("restart", "catalog-svc")
            #expect(restart.status == 0, "restart failed: \(restart)")
            #expect(try Self.secretFiles(of: system).map { try Data(contentsOf: $0) } == keys, "restart changed the keys")
            let restarted = try system.row("catalog-svc", in: try await system.status())
            #expect(restarted.status == "serving", "\(restarted)")
            #expect(restarted.pid != nil && restarted.pid != after.pid && restarted.supervisorPid != after.supervisorPid, "\(after) → \(restarted)")
            #expect(restarted.restarts == 0)
            if let old = after.pid { #expect(!Self.isAlive(old), "the replaced catalog-svc \(old) still runs") }
            // The other services were left alone.
            let auth = try system.row("auth-svc", in: try await system.status())
            #expect(auth.status == "serving" && auth.restarts == 0)

            let unknown = try await system.run("restart", "no-such-svc")
            #expect(unknown.status != 0 && unknown.errors.contains("unknown service"), "\(unknown)")

            let pids = try await system.status().flatMap { [$0.pid, $0.supervisorPid] }.compactMap { $0 }
            let down = try await system.run("down")
            #expect(down.status == 0, "down failed: \(down)")
            for pid in pids { #expect(!Self.isAlive(pid), "process \(pid) is still there after down") }
            #expect(try await system.processesLeft().isEmpty)
        }
    }

    @Test("a service's log past SHOP_LOG_MAX_KB moves to NAME.log.1 and starts again; the service logs on")
    func logRotation() async throws {
        try await withComposeSystem(environment: ["SHOP_LOG_MAX_KB": "1", "SHOP_LOG_CHECK_SECONDS": "1"]) { system in
            let up = try await system.run("up")
            try #require(up.status == 0, "up failed: \(up)")
            let rotated = system.data.appendingPathComponent("run/catalog-svc.log.1")
            // Every call is a line in catalog-svc's log.
            let client = try RPCClient(target: SocketAddressText(host: "127.0.0.1", port: system.ports["catalog-svc"] ?? 0))
            let call = { _ = try await client.unary(MetaContract.describe, Empty(), options: CallOptions(timeout: .seconds(5))) }
            // Rotation copies the log to NAME.log.1, empties it and then notes it there: the
            // note, not the copy, says it is done.
            let moved = try await eventually(within: .seconds(60), every: .milliseconds(200)) {
                for _ in 0..<5 { try await call() }
                return system.log(of: "catalog-svc").contains("log rotated")
            }
            try #require(moved, "catalog-svc.log was never rotated:\n\(system.log(of: "catalog-svc"))")
            let old = try String(contentsOf: rotated, encoding: .utf8)
            #expect(old.contains("started catalog-svc"), "the rotated lines are not the log's start:\n\(old)")
            #expect(!FileManager.default.fileExists(atPath: rotated.path + ".tmp"), "the copy's temporary file is left")
            // The service writes on into the emptied log.
            let grows = try await eventually(within: .seconds(30), every: .milliseconds(200)) {
                try await call()
                return system.log(of: "catalog-svc").contains("Describe")
            }
            #expect(grows, "nothing logged after the rotation:\n\(system.log(of: "catalog-svc"))")
            await client.close()
        }
    }

    @Test("rotation keeps SHOP_LOG_KEEP generations, NAME.log.1 the newest, and drops the oldest")
    func logGenerations() async throws {
        try await withComposeSystem(environment: ["SHOP_LOG_MAX_KB": "1", "SHOP_LOG_CHECK_SECONDS": "1", "SHOP_LOG_KEEP": "2"]) { system in
            let up = try await system.run("up")
            try #require(up.status == 0, "up failed: \(up)")
            let generation = { (number: Int) in system.data.appendingPathComponent("run/catalog-svc.log.\(number)") }
            let read = { (number: Int) in (try? String(contentsOf: generation(number), encoding: .utf8)) ?? "" }
            let client = try RPCClient(target: SocketAddressText(host: "127.0.0.1", port: system.ports["catalog-svc"] ?? 0))
            // Three rotations at least: the first generation (which starts with the service's
            // start) has moved to NAME.log.2 and then out, so NAME.log.2 starts with a rotation's note.
            let rotatedThrice = try await eventually(within: .seconds(90), every: .milliseconds(200)) {
                for _ in 0..<5 { _ = try await client.unary(MetaContract.describe, Empty(), options: CallOptions(timeout: .seconds(5))) }
                let second = read(2)
                return !second.isEmpty && !second.contains("started catalog-svc") && second.contains("log rotated")
            }
            await client.close()
            try #require(rotatedThrice, "catalog-svc.log did not rotate three times:\n\(system.log(of: "catalog-svc"))")
            #expect(!FileManager.default.fileExists(atPath: generation(3).path), "a generation beyond SHOP_LOG_KEEP is kept")
            // Newest first: NAME.log.1's lines come after NAME.log.2's (lines start with their UTC time).
            let newer = read(1), older = read(2)
            let firstTime = { (text: String) in String(text.prefix(24)) }
            #expect(!newer.isEmpty && firstTime(older) <= firstTime(newer), "NAME.log.2 is not the older generation:\n\(older.prefix(200))\n---\n\(newer.prefix(200))")
            let down = try await system.run("down")
            #expect(down.status == 0, "down failed: \(down)")
        }
    }

    @Test("up fails with the service's last log lines when it does not come up")
    func failedHealthWaitShowsTheLog() async throws {
        // Something else already listens on catalog-svc's port.
        let squatter = try ListeningSocket()
        try await withComposeSystem(ports: ["catalog-svc": squatter.port]) { system in
            let up = try await system.run("up")
            #expect(up.status != 0, "up succeeded though catalog-svc cannot listen: \(up)")
            #expect(up.errors.contains("catalog-svc exited while starting"), "\(up)")
            #expect(up.errors.contains("last log lines"), "\(up)")
            #expect(up.errors.contains("Address already in use"), "catalog-svc's own log line is not shown: \(up)")

            let rows = try await system.status()
            #expect(try system.row("auth-svc", in: rows).status == "serving", "\(rows)")
            #expect(try system.row("catalog-svc", in: rows).status == "stopped", "the failed service keeps restarting: \(rows)")
            #expect(rows.filter { !["auth-svc", "catalog-svc"].contains($0.name) }.allSatisfy { $0.status == "stopped" }, "up went on after the failure: \(rows)")

            let down = try await system.run("down")
            #expect(down.status == 0, "down failed: \(down)")
            #expect(try await system.processesLeft().isEmpty)
        }
        withExtendedLifetime(squatter) {}
    }

    @Test("ports follow SHOP_PORT_BASE and SHOP_<NAME>_PORT; defaults are DESIGN.md's; bad ones are refused")
    func portsFollowTheEnvironment() async throws {
        try await withComposeSystem { system in
            var environment = system.environment
            for name in StorefrontServices.names { environment[ComposeSystem.portVariable(of: name)] = .some(nil) }
            let compose = Repository.url("deploy/compose").path

            let defaults = try await Command.run(compose, ["status", "--json"], environment: environment, timeout: .seconds(60))
            let defaultRows = try JSONDecoder().decode([ComposeSystem.Row].self, from: Data(defaults.output.utf8))
            for row in defaultRows {
                #expect(row.address == "127.0.0.1:\(StorefrontServices.port(of: row.name) ?? 0)", "\(row)")
                #expect(row.status == "stopped" && row.pid == nil, "\(row)")
            }
            #expect(defaultRows.map(\.name) == system.services)

            environment["SHOP_PORT_BASE"] = "30000"
            environment["SHOP_ORDER_PORT"] = "31234"
            let based = try await Command.run(compose, ["status", "--json"], environment: environment, timeout: .seconds(60))
            let basedRows = try JSONDecoder().decode([ComposeSystem.Row].self, from: Data(based.output.utf8))
            let expected = ["auth-svc": 30001, "catalog-svc": 30002, "basket-svc": 30003, "order-svc": 31234, "gateway": 31080]
            for row in basedRows { #expect(row.address == "127.0.0.1:\(expected[row.name] ?? 0)", "\(row)") }

            environment["SHOP_GATEWAY_PORT"] = "80800"
            let refused = try await Command.run(compose, ["up"], environment: environment, timeout: .seconds(60))
            #expect(refused.status != 0 && refused.errors.contains("80800"), "\(refused)")
            environment["SHOP_GATEWAY_PORT"] = "30002"
            let clash = try await Command.run(compose, ["up"], environment: environment, timeout: .seconds(60))
            #expect(clash.status != 0 && clash.errors.contains("two services on port 30002"), "\(clash)")
            #expect(try await system.processesLeft().isEmpty, "a refused up started something")
        }
    }

    /// The API keys compose generates into its data directory: admin, then internal.
    /// What `up` says after its table (issue 27, point 10), and the record it leaves for
    /// shopctl: the gateway and web shop addresses, the mail directory, the admin key's file and
    /// the next commands.
    static func expectFirstRunSummary(_ output: String, system: ComposeSystem) throws {
        let gateway = "127.0.0.1:\(system.ports["gateway"] ?? 0)"
        let summary = try #require(output.range(of: "Storefront is up.").map { String(output[$0.upperBound...]) }, "no summary after the table:\n\(output)")
        let mail = system.data.appendingPathComponent("auth-svc/mail").path
        let key = system.data.appendingPathComponent("admin-api-key").path
        for expected in ["http://\(gateway)/", mail, key, "export SHOP_GATEWAY=\(gateway)", "shopctl products list", "shopctl auth signup"] {
            #expect(summary.contains(expected), "the summary lacks \(expected):\n\(summary)")
        }
        let record = system.configHome.appendingPathComponent("shopctl/compose.json")
        let fields = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: record)) as? [String: String])
        #expect(fields == ["gateway": gateway, "webURL": "http://\(gateway)/", "mailDir": mail, "adminKeyFile": key])
        let mode = try FileManager.default.attributesOfItem(atPath: record.path)[.posixPermissions] as? Int
        #expect(mode == 0o600, "compose.json is not 0600")
    }

    static func secretFiles(of system: ComposeSystem) -> [URL] {
        ["admin-api-key", "internal-api-key"].map { system.data.appendingPathComponent($0) }
    }

    /// The arguments of process `pid`, from /proc.
    static func commandLine(of pid: Int) -> [String] {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return [] }
        return data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Whether `pid` is a live process; a zombie waiting for its parent is not.
    static func isAlive(_ pid: Int) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return false }
        return stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).first != "Z"
    }
}
