import Foundation
@testable import ServiceKit
import ServiceTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// ``LogSink``: log lines reach their descriptor in order from a thread of the sink's own, so a
/// descriptor nobody reads (a stalled pipe) never blocks a caller, and what could not wait is
/// dropped and reported.
@Suite("Log sink")
struct LogSinkTests {
    /// A pipe: the sink writes to `write`, the test reads `read`.
    struct Pipe: ~Copyable {
        let read: Int32
        let write: Int32

        init() throws {
            var fds: [Int32] = [0, 0]
            guard pipe(&fds) == 0 else { throw POSIXError(.EMFILE) }
            read = fds[0]
            write = fds[1]
        }

        /// Reads until `done` holds for what was read, or `limit` passes; returns the lines.
        func lines(within limit: Duration, until done: ([String]) -> Bool) async -> [String] {
            let deadline = ContinuousClock.now + limit
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65_536)
            _ = fcntl(read, F_SETFL, fcntl(read, F_GETFL) | O_NONBLOCK)
            while ContinuousClock.now < deadline {
                let count = chunk.withUnsafeMutableBytes { Glibc.read(read, $0.baseAddress!, $0.count) }
                if count > 0 {
                    bytes.append(contentsOf: chunk[0..<count])
                    if done(Self.split(bytes)) { break }
                } else {
                    try? await Task.sleep(for: .milliseconds(2))
                }
            }
            return Self.split(bytes)
        }

        private static func split(_ bytes: [UInt8]) -> [String] {
            String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)
        }

        deinit {
            close(read)
            close(write)
        }
    }

    static func line(_ number: Int) -> [UInt8] {
        Array("line \(number) \(String(repeating: "x", count: 80))\n".utf8)
    }

    /// Lines 0 to `count` - 1 as read back, without their newlines.
    static func lines(upTo count: Int) -> [String] {
        (0..<count).map { String(decoding: line($0).dropLast(), as: UTF8.self) }
    }

    /// The number of a line written by ``line(_:)``, or nil for any other text (a torn line).
    static func number(of line: String) -> Int? {
        let parts = line.split(separator: " ")
        guard parts.count == 3, parts[0] == "line", parts[2] == String(repeating: "x", count: 80) else { return nil }
        return Int(parts[1])
    }

    /// The count in a line reporting dropped lines, or nil.
    static func droppedCount(in line: String) -> Int? {
        guard let range = line.range(of: " warning log: "), line.hasSuffix("line(s) dropped: nothing took them for a while") else {
            return nil
        }
        return Int(line[range.upperBound...].prefix { $0.isNumber })
    }

    @Test("lines written while nobody reads never block the caller; past the limit they are dropped, and reported once reading resumes")
    func stalledReaderDropsAndReports() async throws {
        let pipe = try Pipe()
        let sink = LogSink(fd: pipe.write, limit: 64 * 1024)
        let total = 20_000  // ~1.8 MB: more than the pipe (64 KiB, or 1 MiB with 64 KiB pages) and the sink's limit hold
        let written = Atomic<Bool>(false)
        let writer = Thread {
            for number in 0..<total { sink.write(Self.line(number)) }
            written.store(true, ordering: .releasing)
        }
        writer.start()
        // With a write(2) per line on the caller's thread, this thread would block on the full pipe.
        let returned = await eventually(within: .seconds(10)) { written.load(ordering: .acquiring) }
        #expect(returned, "writing to the sink blocked while nothing read the pipe")
        // Every line is either read whole or counted in a report of dropped lines.
        let accounted = { (lines: [String]) -> Int in
            lines.reduce(0) { sum, line in sum + (Self.number(of: line) != nil ? 1 : Self.droppedCount(in: line) ?? 0) }
        }
        let lines = await pipe.lines(within: .seconds(10)) { accounted($0) >= total }
        let numbers = lines.compactMap(Self.number(of:))
        let reports = lines.compactMap(Self.droppedCount(in:))
        let torn = lines.count - numbers.count - reports.count
        #expect(torn == 0, "\(torn) line(s) neither whole nor a report")
        #expect(numbers == numbers.sorted() && Set(numbers).count == numbers.count, "lines out of order or repeated")
        #expect(!reports.isEmpty && numbers.count < total, "\(numbers.count) of \(total) delivered, reports \(reports)")
        #expect(numbers.count + reports.reduce(0, +) == total, "\(numbers.count) delivered, reports \(reports)")
        #expect(sink.flush(within: .seconds(5)))
    }

    @Test("flush returns once every queued line is written, and the lines arrive whole and in order")
    func flushWritesEverything() async throws {
        let pipe = try Pipe()
        let sink = LogSink(fd: pipe.write)
        for number in 0..<100 { sink.write(Self.line(number)) }
        #expect(sink.flush(within: .seconds(5)))
        let lines = await pipe.lines(within: .seconds(5)) { $0.count == 100 }
        let expected = Self.lines(upTo: 100)
        #expect(lines == expected)
    }

    @Test("a sink whose descriptor was never open (a process started with 2>&-) drops its lines without a write")
    func descriptorNeverOpen() throws {
        // A number far above any descriptor the test process holds: fcntl says EBADF, and a
        // write(2) there would be EBADF too, which SystemCalls treats as a programmer error.
        let unused: Int32 = 1_000_000
        try #require(fcntl(unused, F_GETFD) == -1 && errno == EBADF)
        let sink = LogSink(fd: unused)
        for number in 0..<10 { sink.write(Self.line(number)) }
        #expect(sink.flush(within: .seconds(5)))
    }
}
