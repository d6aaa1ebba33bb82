import Contracts
import Foundation
import RPC
import RPCHTTP2
import Testing

/// A real service process: flags, logging, health, Describe and SIGTERM handling together.
/// Uses `bench-server`, the smallest executable built on ServiceKit.
@Suite("Service process")
struct ServiceProcessTests {
    /// The built `bench-server` next to the test bundle.
    static var benchServer: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("bench-server")
    }

    @Test("a service answers health and Describe, then exits 0 on SIGTERM after draining")
    func sigtermExitsCleanly() async throws {
        let binary = Self.benchServer
        try #require(FileManager.default.isExecutableFile(atPath: binary.path), "build first: swift build --build-tests (\(binary.path))")
        let process = Process()
        process.executableURL = binary
        process.arguments = ["--port", "0", "--log-level", "info", "--grace-seconds", "5"]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.terminate() } }

        // The "listening" log line names the port chosen.
        let reader = LineReader(errors.fileHandleForReading)
        let port = try #require(await reader.firstMatch(within: .seconds(20)) { line -> Int? in
            guard line.contains("listening"), let range = line.range(of: #"address=[^ ]+:(\d+)"#, options: .regularExpression)
            else { return nil }
            return Int(line[range].split(separator: ":").last ?? "")
        }, "the server never logged its address")

        let client = try RPCClient(target: SocketAddressText(host: "127.0.0.1", port: port))
        let health = try await client.unary(HealthContract.check, HealthCheckRequest(), options: CallOptions(timeout: .seconds(5)))
        #expect(health.status == .serving)
        let described = try await client.unary(MetaContract.describe, Empty(), options: CallOptions(timeout: .seconds(5)))
        #expect(described.services.map(\.name).contains("bench.v1.BenchService"))
        #expect(described.services.map(\.name).contains(HealthContract.service))
        await client.close()

        process.interrupt()  // SIGINT; SIGTERM takes the same path
        let exited = await reader.waitForExit(of: process, within: .seconds(10))
        #expect(exited, "the process did not exit after SIGINT")
        #expect(process.terminationStatus == 0)
        let lines = await reader.lines
        #expect(lines.contains { $0.contains("draining") })
        #expect(lines.contains { $0.contains("stopped") })
    }
}

/// Reads a child's output line by line on a background thread.
actor LineReader {
    private(set) var lines: [String] = []
    private var buffer = Data()

    init(_ handle: FileHandle) {
        let thread = Thread { [weak self] in
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { return }
                guard let self else { return }
                Task { await self.append(chunk) }
            }
        }
        thread.start()
    }

    private func append(_ chunk: Data) {
        buffer.append(chunk)
        while let newline = buffer.firstIndex(of: 0x0A) {
            lines.append(String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self))
            buffer = Data(buffer[(newline + 1)...])
        }
    }

    /// The first value `match` extracts from a line, waiting up to `limit`.
    func firstMatch<Value: Sendable>(within limit: Duration, _ match: (String) -> Value?) async -> Value? {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if let value = lines.lazy.compactMap(match).first { return value }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return nil
    }

    /// Waits for `process` to exit; returns whether it did in time.
    func waitForExit(of process: Process, within limit: Duration) async -> Bool {
        let deadline = ContinuousClock.now + limit
        while process.isRunning && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        try? await Task.sleep(for: .milliseconds(100))  // the last lines
        return !process.isRunning
    }
}
