import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The process's own figures, read from `/proc` when scraped, under the names every
/// Prometheus client library uses: CPU time, resident and virtual memory, open and allowed
/// file descriptors, start time; and `storefront_build_info` naming the program and version.
public enum ProcessMetrics {
    /// Registers the process series in `registry`, and the build info of `program`.
    public static func register(in registry: MetricsRegistry, program: String, version: String) {
        registry.sampled("process_cpu_seconds_total", type: .counter, help: "User and system CPU time spent, in seconds.") {
            cpuSeconds() ?? 0
        }
        registry.sampled("process_resident_memory_bytes", type: .gauge, help: "Resident memory size in bytes.") {
            Double(residentBytes())
        }
        registry.sampled("process_virtual_memory_bytes", type: .gauge, help: "Virtual memory size in bytes.") {
            Double(memoryPages(field: 0) ?? 0) * pageSize
        }
        registry.sampled("process_open_fds", type: .gauge, help: "Number of open file descriptors.") {
            Double(openDescriptors() ?? 0)
        }
        registry.sampled("process_max_fds", type: .gauge, help: "Maximum number of open file descriptors.") {
            Double(descriptorLimit())
        }
        let started = startTimeSeconds() ?? Date().timeIntervalSince1970
        registry.sampled("process_start_time_seconds", type: .gauge, help: "Start time of the process since the Unix epoch, in seconds.") {
            started
        }
        registry.sampled(
            "storefront_build_info", type: .gauge, help: "Which program and version this process runs (always 1).",
            labels: ["program": program, "version": version]
        ) { 1 }
    }

    private static let pageSize = Double(sysconf(Int32(_SC_PAGESIZE)))
    private static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    /// The fields of `/proc/self/stat` after the command name (which may hold spaces): the
    /// first is the state, field 3 of the man page.
    private static func statFields() -> [Substring]? {
        guard let text = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return nil }
        return text[text.index(after: close)...].split(separator: " ")
    }

    /// utime + stime (fields 14 and 15), in seconds.
    static func cpuSeconds() -> Double? {
        guard let fields = statFields(), fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else {
            return nil
        }
        return (user + system) / ticksPerSecond
    }

    /// The resident set in bytes (`/proc/self/statm`); 0 when it cannot be read.
    public static func residentBytes() -> Int {
        (memoryPages(field: 1) ?? 0) * Int(pageSize)
    }

    /// Field `field` of `/proc/self/statm`, in pages (0: size, 1: resident).
    private static func memoryPages(field: Int) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        return fields.count > field ? Int(fields[field]) : nil
    }

    /// The entries of `/proc/self/fd`, less the one listing them opens.
    static func openDescriptors() -> Int? {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return nil }
        return max(0, entries.count - 1)
    }

    /// The soft limit on open descriptors.
    private static func descriptorLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        return Int(clamping: limit.rlim_cur)
    }

    /// The boot time (`btime` of `/proc/stat`) plus the process's start (field 22 of
    /// `/proc/self/stat`, in clock ticks after boot).
    static func startTimeSeconds() -> Double? {
        guard let fields = statFields(), fields.count > 19, let ticks = Double(fields[19]),
            let stat = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
            let line = stat.split(separator: "\n").first(where: { $0.hasPrefix("btime ") }),
            let boot = Double(line.dropFirst(6).trimmingCharacters(in: .whitespaces))
        else { return nil }
        return boot + ticks / ticksPerSecond
    }
}
