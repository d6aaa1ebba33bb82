import Foundation
import ServiceTestSupport
import Testing

/// The gateway's event loops, one per core it may use, each on a core of its own unless told not.
@Suite("Gateway: event loops pinned to cores")
struct LoopPinningLiveTests {
    /// The CPUs (`Cpus_allowed_list`) of each of `pid`'s threads named `gateway-<n>`, by name.
    static func loopCPUs(of pid: Int32) throws -> [String: [Int]] {
        let tasks = "/proc/\(pid)/task"
        var lists: [String: [Int]] = [:]
        for tid in try FileManager.default.contentsOfDirectory(atPath: tasks) {
            let name = (try? String(contentsOfFile: "\(tasks)/\(tid)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
            guard name.hasPrefix("gateway-"), let cpus = try? AllowedCPUs.read(statusFile: "\(tasks)/\(tid)/status")
            else { continue }
            lists[name] = cpus
        }
        return lists
    }

    @Test("each loop runs on one core of its own by default, and on any with --no-pin-loops")
    func loopsPinnedUnlessTurnedOff() async throws {
        let processCPUs = try #require(try AllowedCPUs.read(statusFile: "/proc/self/status"))
        for (flags, pinned) in [([String](), true), (["--no-pin-loops"], false)] {
            let data = try TestScratch.makeDirectory(prefix: "gateway-pinning")
            defer { try? FileManager.default.removeItem(at: data) }
            let gateway = try await ServiceProcess.launch(
                "gateway",
                arguments: ["--port", "0", "--data-dir", data.path] + flags
                    + ["--auth-addr", "127.0.0.1:1", "--catalog-addr", "127.0.0.1:1", "--basket-addr", "127.0.0.1:1",
                       "--order-addr", "127.0.0.1:1"],
                environment: ["SHOP_INTERNAL_API_KEY": TestScratch.randomKey()])
            await gateway.closeClient()
            let loops = try Self.loopCPUs(of: gateway.processIdentifier)
            _ = await gateway.stop()
            #expect(loops.count == processCPUs.count, "\(flags): \(loops), one per CPU of \(processCPUs)")
            if pinned {
                // One CPU each, all different.
                #expect(loops.values.allSatisfy { $0.count == 1 }, "\(loops)")
                #expect(Set(loops.values).count == loops.count, "\(loops)")
            } else {
                #expect(loops.values.allSatisfy { $0 == processCPUs }, "\(loops) against \(processCPUs)")
            }
        }
    }
}
