import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

/// A real service process: flags, logging, health, Describe and SIGTERM handling together.
/// Uses `bench-server`, the smallest executable built on ServiceKit.
@Suite("Service process")
struct ServiceProcessLiveTests {
    /// The built `bench-server` next to the test bundle.
    static var benchServer: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("bench-server")
    }

    @Test("a service answers health and Describe, then exits 0 on SIGTERM after draining")
    func sigtermExitsCleanly() async throws {
        let (process, reader) = try Self.startBenchServer(["--grace-seconds", "5"])
        defer { if process.isRunning { process.terminate() } }
        let port = try await Self.port(loggedBy: reader)

        let client = try RPCClient(target: SocketAddressText(host: "127.0.0.1", port: port))
        let health = try await client.unary(HealthContract.check, HealthCheckRequest(), options: CallOptions(timeout: .seconds(5)))
        #expect(health.status == .serving)
        // Its own API service too, by name (the gRPC health convention).
        let own = try await client.unary(
            HealthContract.check, HealthCheckRequest(service: "bench.v1.BenchService"), options: CallOptions(timeout: .seconds(5)))
        #expect(own.status == .serving)
        let described = try await client.unary(MetaContract.describe, Empty(), options: CallOptions(timeout: .seconds(5)))
        #expect(described.services.map(\.name).contains("bench.v1.BenchService"))
        #expect(described.services.map(\.name).contains(HealthContract.service))
        await client.close()

        process.interrupt()  // SIGINT; SIGTERM takes the same path
        let exited = await eventually(within: .seconds(10)) { !process.isRunning && reader.hasEnded }
        #expect(exited, "the process did not exit after SIGINT")
        #expect(process.terminationStatus == 0)
        let lines = reader.lines
        #expect(lines.contains { $0.contains("draining") })
        #expect(lines.contains { $0.contains("stopped") })
    }

    @Test("out of descriptors, a service pauses accepting instead of spinning and logging without end, then serves again")
    func outOfDescriptors() async throws {
        // 30 descriptors: about 15 at start, so the connections below run it out.
        let (process, reader) = try Self.startBenchServer([], shellLimits: "ulimit -n 30")
        defer { if process.isRunning { process.terminate() } }
        let port = try await Self.port(loggedBy: reader)

        let sockets = try (0..<40).map { _ in try Self.connectedSocket(port: port) }
        try await Task.sleep(for: .seconds(1))
        // The listener stays readable while connections wait: retried at once, the loop spun,
        // logging a line per try (thousands a second). Now one try and line per 100 ms.
        let failures = reader.lines.filter { $0.contains("accept failed") }.count
        #expect((1...20).contains(failures), "\(failures) accept failures logged in a second")

        for fd in sockets { close(fd) }  // their server ends close, freeing descriptors
        // Serving again: a health check answers SERVING within 30 s. Each try has a fresh
        // connection — one that connected while descriptors were short may wait in the
        // backlog behind the closed ones — and a short deadline, so a busy machine's slow
        // catch-up is waited for rather than mistaken for a service that never serves again.
        let served = await eventually(within: .seconds(30), every: .milliseconds(200)) {
            guard let client = try? RPCClient(target: SocketAddressText(host: "127.0.0.1", port: port)) else { return false }
            defer { Task { await client.close() } }
            let health = try? await client.unary(HealthContract.check, HealthCheckRequest(), options: CallOptions(timeout: .seconds(3)))
            return health?.status == .serving
        }
        #expect(served, "no SERVING health answer within 30 s of the descriptors coming back")
    }

    /// Starts `bench-server --port 0 --log-level info` with `arguments`, under `/bin/sh` with
    /// `shellLimits` (e.g. `ulimit -n 30`) when given; returns it with a reader of its log.
    @Test("a service whose standard error is a pipe nobody reads keeps serving: SIGPIPE is ignored")
    func brokenLogPipe() async throws {
        let binary = Self.benchServer
        try #require(FileManager.default.isExecutableFile(atPath: binary.path), "build first: swift build --build-tests")
        let port = try FreePorts.take(1)[0]
        let process = Process()
        process.executableURL = binary
        process.arguments = ["--port", String(port), "--log-level", "info"]
        let errors = Pipe()
        try errors.fileHandleForReading.close()  // every log line now meets a pipe without a reader
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        try errors.fileHandleForWriting.close()
        let client = try RPCClient(target: SocketAddressText(host: "127.0.0.1", port: port))
        // Each call logs a line (info), each a write to the broken pipe.
        var answered = 0
        for _ in 0..<50 where process.isRunning {
            if (try? await client.unary(HealthContract.check, HealthCheckRequest(), options: CallOptions(timeout: .seconds(1)))) != nil {
                answered += 1
            } else {
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        await client.close()
        #expect(process.isRunning, "the service died (status \(process.isRunning ? 0 : process.terminationStatus)) writing to a broken pipe")
        #expect(answered > 0)
    }

    static func startBenchServer(_ arguments: [String], shellLimits: String? = nil) throws -> (Process, ProcessLog) {
        let binary = benchServer
        try #require(FileManager.default.isExecutableFile(atPath: binary.path), "build first: swift build --build-tests (\(binary.path))")
        let process = Process()
        let command = ["--port", "0", "--log-level", "info"] + arguments
        if let shellLimits {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "\(shellLimits) && exec \"$0\" \"$@\"", binary.path] + command
        } else {
            process.executableURL = binary
            process.arguments = command
        }
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        return (process, ProcessLog(reading: errors.fileHandleForReading, name: "bench-server"))
    }

    /// The port the server's "listening" log line names.
    static func port(loggedBy reader: ProcessLog) async throws -> Int {
        try #require(await reader.first(within: .seconds(20)) { line -> Int? in
            guard line.contains("listening"), let range = line.range(of: #"address=[^ ]+:(\d+)"#, options: .regularExpression)
            else { return nil }
            return Int(line[range].split(separator: ":").last ?? "")
        }, "the server never logged its address")
    }

    /// A TCP connection to 127.0.0.1:`port` (nothing sent).
    static func connectedSocket(port: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard fd >= 0, result == 0 else { throw POSIXError(.ECONNREFUSED) }
        return fd
    }
}
