internal import Foundation

/// What the kernel says about processes and sockets, read from `/proc`: whether a pid still
/// runs, and which TCP ports something listens on.
package enum SystemProcesses {
    /// Whether `pid` is a live process; a zombie waiting for its parent is not.
    package static func isAlive(_ pid: Int) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return false }
        return stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).first != "Z"
    }

    /// Every local TCP port in the LISTEN state, IPv4 and IPv6 (`/proc/net/tcp`, `tcp6`: the
    /// local address is `HEXIP:HEXPORT`, state `0A` is LISTEN).
    package static func listeningPorts() -> Set<Int> {
        var ports: Set<Int> = []
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            guard let text = try? String(contentsOfFile: table, encoding: .utf8) else { continue }
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ")
                guard fields.count > 3, fields[3] == "0A", let port = fields[1].split(separator: ":").last.flatMap({ Int($0, radix: 16) })
                else { continue }
                ports.insert(port)
            }
        }
        return ports
    }
}
