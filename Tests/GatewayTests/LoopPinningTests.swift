import Foundation
import ServiceTestSupport
import Testing

/// The gateway's event loops, one per core it may use, each on a core of its own unless told not.
@Suite("Gateway: event loops pinned to cores")
struct LoopPinningTests {
    /// The CPU list (`Cpus_allowed_list`) of each of `pid`'s threads named `gateway-<n>`, by name.
    static func loopCPUs(of pid: Int32) throws -> [String: String] {
        let tasks = "/proc/\(pid)/task"
        var lists: [String: String] = [:]
        for tid in try FileManager.default.contentsOfDirectory(atPath: tasks) {
            let name = (try? String(contentsOfFile: "\(tasks)/\(tid)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
            guard name.hasPrefix("gateway-"),
                let status = try? String(contentsOfFile: "\(tasks)/\(tid)/status", encoding: .utf8),
                let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed_list:") })
            else { continue }
            lists[name] = line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)
        }
        return lists
    }

    @Test("each loop runs on one core of its own by default, and on any with --no-pin-loops")
    func loopsPinnedUnlessTurnedOff() async throws {
        let processCPUs = try Self.ownCPUList()
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
            #expect(loops.count == Self.count(of: processCPUs), "\(flags): \(loops), one per CPU of \(processCPUs)")
            if pinned {
                // One CPU each, all different.
                #expect(loops.values.allSatisfy { Int($0) != nil }, "\(loops)")
                #expect(Set(loops.values).count == loops.count, "\(loops)")
            } else {
                #expect(loops.values.allSatisfy { $0 == processCPUs }, "\(loops) against \(processCPUs)")
            }
        }
    }

    /// How many CPUs a list such as `0-3,6` names.
    static func count(of list: String) -> Int {
        list.split(separator: ",").reduce(0) { total, range in
            let bounds = range.split(separator: "-").compactMap { Int($0) }
            return total + (bounds.count == 2 ? bounds[1] - bounds[0] + 1 : 1)
        }
    }

    /// This process's CPU list, as the kernel writes it.
    static func ownCPUList() throws -> String {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("Cpus_allowed_list:") })
        return line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)
    }
}
