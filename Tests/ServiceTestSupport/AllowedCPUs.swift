import Foundation

/// The CPUs the kernel lets a task run on, as `/proc` lists them (`Cpus_allowed_list`), for
/// tests that check where event loops run.
package enum AllowedCPUs {
    /// The CPUs in the `Cpus_allowed_list` line of the status file at `path` (such as
    /// `/proc/self/status` or `/proc/<pid>/task/<tid>/status`); nil when it has none.
    package static func read(statusFile path: String) throws -> [Int]? {
        let status = try String(contentsOfFile: path, encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed_list:") }) else { return nil }
        return parse(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces))
    }

    /// The CPUs a list such as `0-3,6` names, in its order.
    package static func parse(_ list: String) -> [Int] {
        list.split(separator: ",").flatMap { range -> [Int] in
            let bounds = range.split(separator: "-").compactMap { Int($0) }
            return bounds.count == 2 ? Array(bounds[0]...bounds[1]) : bounds
        }
    }
}
