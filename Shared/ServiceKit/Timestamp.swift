internal import Foundation
#if canImport(Glibc)
internal import Glibc
#endif
internal import Synchronization

/// Wall-clock readings as stored (whole Unix seconds, UTC) and as API.md writes them
/// (RFC 3339, e.g. `2026-11-22T01:41:17Z`). Stateless; thread-safe.
package enum Timestamp {
    /// The current time in whole Unix seconds.
    package static func now() -> Int64 { Int64(Date().timeIntervalSince1970) }

    /// `seconds` as an RFC 3339 UTC timestamp.
    package static func rfc3339(_ seconds: Int64) -> String {
        format(Int(seconds)) + "Z"
    }
}

/// Log-line timestamps: ISO 8601 UTC with milliseconds, the seconds part formatted once per second.
extension Timestamp {
    private static let cache = Mutex<(second: Int, text: String)>((-1, ""))

    /// Appends the current time, e.g. `2026-11-22T00:55:38.123Z`.
    static func append(to line: inout [UInt8]) {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        let second = Int(spec.tv_sec)
        let millis = Int(spec.tv_nsec) / 1_000_000
        let prefix = cache.withLock { cache -> String in
            if cache.second != second { cache = (second, format(second)) }
            return cache.text
        }
        line.append(contentsOf: prefix.utf8)
        line.append(contentsOf: [0x2E, UInt8(48 + millis / 100), UInt8(48 + millis / 10 % 10), UInt8(48 + millis % 10), 0x5A])
    }

    /// The current time as a log line writes it.
    static func logText() -> String {
        var line: [UInt8] = []
        append(to: &line)
        return String(decoding: line, as: UTF8.self)
    }

    /// `YYYY-MM-DDTHH:MM:SS` for seconds since 1970 in UTC (civil-from-days arithmetic).
    package static func format(_ seconds: Int) -> String {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        // Howard Hinnant's days-to-civil algorithm, in whole numbers.
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(year)-\(two(month))-\(two(day))T\(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60))"
    }
}

extension Duration {
    /// The duration in seconds, as a floating-point number (for rates and log figures).
    package var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
