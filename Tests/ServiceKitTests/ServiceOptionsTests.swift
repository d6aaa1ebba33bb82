import ArgumentParser
import RPCHTTP2
@testable import ServiceKit
import Testing

/// The server-limit flags every service takes (``ServiceOptions/serverLimits(defaultTimeout:)``).
@Suite("Service options: server limits")
struct ServiceOptionsTests {
    @Test("byte counts take K, M and G for KiB, MiB and GiB, and nothing else",
          arguments: [("4M", 4 << 20), ("262144", 262_144), ("64k", 64 << 10), ("1G", 1 << 30)] as [(String, Int)])
    func byteCounts(text: String, bytes: Int) {
        #expect(ServiceOptions.byteCount(text) == bytes)
    }

    @Test("malformed byte counts are refused", arguments: ["", "M", "4 M", "4MB", "-1", "x", "99999999999999999999G"])
    func malformedByteCounts(text: String) {
        #expect(ServiceOptions.byteCount(text) == nil)
    }

    @Test("the defaults: 30 s for a call without a deadline (the given one for the gateway), 16 MiB per connection, 64 MiB per process")
    func defaults() throws {
        let options = try ServiceOptions.parse([])
        let limits = options.serverLimits()
        #expect(limits.defaultUnaryTimeout == .seconds(30))
        #expect(limits.answerBuffer.perConnection == 16 << 20)
        #expect(limits.answerBuffer.perProcess == 64 << 20)
        #expect(options.serverLimits(defaultTimeout: .seconds(10)).defaultUnaryTimeout == .seconds(10))
    }

    @Test("the flags set every limit")
    func flags() throws {
        let options = try ServiceOptions.parse([
            "--default-timeout-ms", "1500", "--answer-buffer-per-connection", "1M", "--answer-buffer-per-process", "512M",
        ])
        let limits = options.serverLimits(defaultTimeout: .seconds(10))
        #expect(limits.defaultUnaryTimeout == .milliseconds(1500))
        #expect(limits.answerBuffer.perConnection == 1 << 20)
        #expect(limits.answerBuffer.perProcess == 512 << 20)
    }

    @Test("bad values are refused with the flag named", arguments: [
        ["--default-timeout-ms", "0"], ["--answer-buffer-per-connection", "12"], ["--answer-buffer-per-process", "lots"],
    ])
    func badValues(arguments: [String]) {
        #expect(throws: (any Error).self) { try ServiceOptions.parse(arguments) }
    }
}
