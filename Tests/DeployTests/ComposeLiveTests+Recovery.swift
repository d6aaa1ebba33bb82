import Foundation
import ServiceTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// deploy/compose when runs overlap or a supervisor is gone: part of the serialized
/// ``ComposeLiveTests`` suite, so that one system runs at a time.
extension ComposeLiveTests {
    @Test("two ups at once start each service once; down then leaves no process and no port listening")
    func concurrentUpsStartEachServiceOnce() async throws {
        try await withComposeSystem { system in
            // Each supervisor takes a second to start (bash reads BASH_ENV before the script):
            // the window in which another `up` finds no supervisor of a service is then wide
            // enough for two `up`s started together to meet in it every time.
            let slowStart = system.scratch.appendingPathComponent("slow-supervisor-start.sh")
            try #"if [ "${1:-}" = __supervise ]; then sleep 1; fi"#.write(to: slowStart, atomically: true, encoding: .utf8)
            var environment = system.environment
            environment["BASH_ENV"] = slowStart.path
            let compose = ComposeSystem.script.path

            async let first = Command.run(compose, ["up"], environment: environment, timeout: .seconds(180))
            async let second = Command.run(compose, ["up"], environment: environment, timeout: .seconds(180))
            let ups = try await [first, second]
            for up in ups { #expect(up.status == 0, "one of two concurrent ups failed: \(up)") }
            #expect(
                ups.contains { $0.errors.contains("another deploy/compose up, down or restart runs on") },
                "neither up waited for the other: \(ups)")

            for name in system.services {
                let log = system.log(of: name)
                let starts = log.components(separatedBy: "compose: started \(name) (pid ").count - 1
                #expect(starts == 1, "\(name) was started \(starts) times:\n\(log)")
            }
            let rows = try await system.status()
            for row in rows { #expect(row.status == "serving" && row.supervisorPid != nil && row.restarts == 0, "\(row)") }

            let down = try await system.run("down")
            #expect(down.status == 0, "down failed: \(down)")
            let left = try await system.processesLeft()
            #expect(left.isEmpty, "processes left after down: \(left)")
            let ports = Set(system.services.compactMap { system.ports[$0] })
            let listening = SystemProcesses.listeningPorts().intersection(ports)
            #expect(listening.isEmpty, "ports still listening after down: \(listening.sorted())")
        }
    }

    @Test("up after a supervisor was SIGKILLed stops the service it left running and starts it supervised")
    func upReplacesAServiceWhoseSupervisorWasKilled() async throws {
        try await withComposeSystem { system in
            let up = try await system.run("up")
            try #require(up.status == 0, "up failed: \(up)")
            let before = try system.row("catalog-svc", in: try await system.status())
            let supervisor = try #require(before.supervisorPid, "\(before)")
            let orphan = try #require(before.pid, "\(before)")
            #expect(kill(Int32(supervisor), SIGKILL) == 0)
            let gone = await eventually(within: .seconds(10)) { !Self.isAlive(supervisor) }
            try #require(gone, "catalog-svc's supervisor \(supervisor) survived SIGKILL")
            try #require(Self.isAlive(orphan), "catalog-svc \(orphan) ended with its supervisor; nothing to test")

            let again = try await system.run("up")
            #expect(again.status == 0, "up after the supervisor was killed failed: \(again)")
            #expect(again.errors.contains("catalog-svc (pid \(orphan)) runs without its supervisor"), "\(again)")
            #expect(!Self.isAlive(orphan), "the unsupervised catalog-svc \(orphan) still runs after up")
            let after = try system.row("catalog-svc", in: try await system.status())
            #expect(after.status == "serving" && after.restarts == 0, "\(after)")
            #expect(after.pid != nil && after.pid != orphan, "\(after)")
            #expect(after.supervisorPid != nil && after.supervisorPid != supervisor, "\(after)")
            let log = system.log(of: "catalog-svc")
            #expect(!log.contains("Address already in use"), "the new catalog-svc could not listen:\n\(log)")

            let down = try await system.run("down")
            #expect(down.status == 0, "down failed: \(down)")
            #expect(!Self.isAlive(orphan), "catalog-svc \(orphan) still runs after down")
            let left = try await system.processesLeft()
            #expect(left.isEmpty, "processes left after down: \(left)")
        }
    }

    @Test("up refuses a port on which a service it did not start answers health checks")
    func upRefusesAPortAnsweredByAnotherProcess() async throws {
        // An auth-svc of someone else's: compose's own could not listen beside it, yet the
        // health wait would pass against it.
        let foreignData = try TestScratch.makeDirectory(prefix: "deploy-foreign-auth")
        defer { try? FileManager.default.removeItem(at: foreignData) }
        let foreign = try await ServiceProcess.launch(
            "auth-svc", arguments: ["--port", "0", "--data-dir", foreignData.path, "--scrypt-log-n", "10"],
            environment: ["SHOP_INTERNAL_API_KEY": TestScratch.randomKey()])
        var failure: (any Error)?
        do {
            try await withComposeSystem(ports: ["auth-svc": foreign.port]) { system in
                let up = try await system.run("up")
                #expect(up.status != 0, "up succeeded though another process holds auth-svc's port: \(up)")
                #expect(
                    up.errors.contains("already answers health checks on 127.0.0.1:\(foreign.port), auth-svc's port")
                        && up.errors.contains("SHOP_AUTH_PORT"),
                    "\(up)")
                let rows = try await system.status()
                #expect(rows.allSatisfy { $0.supervisorPid == nil }, "up started supervisors: \(rows)")
                #expect(try await system.processesLeft().isEmpty)
            }
        } catch {
            failure = error
        }
        #expect(foreign.isRunning, "compose stopped a process it did not start")
        await foreign.stop()
        if let failure { throw failure }
    }
}
