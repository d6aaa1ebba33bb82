import Foundation
import ServiceTestSupport
import Testing

/// Interop of the gateway's web edge with clients nobody here wrote, from PyPI
/// (Tests/Interop/README.md): connect-python speaking Connect, and sonora and connect-python
/// speaking gRPC-Web, each with JSON messages, against the four services behind a gateway.
@Suite("Web interop: Connect and gRPC-Web clients from PyPI")
struct WebInteropLiveTests {
    /// `Tests/Interop`, found from this file's path.
    static let interopDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Interop")

    @Test("connect-python, Connect with JSON over HTTP/1.1 and HTTP/2: unary and GET reads, reasons of errors, sign-up to sign-in, WatchBasket sees another call's change, deadlines")
    func connectPython() async throws {
        try await runPeer(
            "connect_peer.py", summaryPrefix: "connect: ", imports: ["connectrpc", "pyqwest", "google.protobuf"],
            install: "python3 -m pip install connect-python", minimumChecks: 28)
    }

    @Test("sonora and connect-python's gRPC-Web with JSON (HTTP/1.1 and HTTP/2) and grpc-web-text: unary, reasons in the trailer frame, sign-up to sign-in, WatchBasket sees another call's change")
    func grpcWeb() async throws {
        try await runPeer(
            "grpcweb_peer.py", summaryPrefix: "grpc-web: ", imports: ["sonora", "aiohttp", "connectrpc", "pyqwest"],
            install: "python3 -m pip install sonora connect-python", minimumChecks: 19)
    }

    /// Starts a stack, runs `script` against its gateway (with auth-svc's mail directory, where
    /// the verification tokens arrive) and fails with the script's output unless it ran at
    /// least `minimumChecks` checks and ended with `<summaryPrefix>N passed, 0 failed`.
    private func runPeer(
        _ script: String, summaryPrefix: String, imports: [String], install: String, minimumChecks: Int,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let path = Self.interopDirectory.appendingPathComponent(script).path
        try #require(FileManager.default.fileExists(atPath: path), "the interop peer is missing at \(path)", sourceLocation: sourceLocation)
        let probe = try await Command.run(
            "python3", ["-c", imports.map { "import \($0)" }.joined(separator: "; ")], timeout: .seconds(60))
        // A missing package fails the test, saying how to install it, rather than skipping it.
        try #require(probe.status == 0, "the peer needs Python packages; run `\(install)` (\(probe))", sourceLocation: sourceLocation)

        try await withLiveGateway(sourceLocation: sourceLocation) { stack in
            let gateway = try stack.service(.gateway)
            let mail = stack.dataDirectory(.auth).appendingPathComponent("mail").path
            let result = try await Command.run(
                "python3", [path, "--port", String(gateway.port), "--mail-dir", mail], timeout: .seconds(180))
            let lines = result.output.split(separator: "\n").map(String.init)
            let summary = lines.last { $0.hasPrefix(summaryPrefix) } ?? ""
            let report = "\(script) exited \(result.status):\n\(result.output)\(result.errors.isEmpty ? "" : "\n--- stderr\n\(result.errors)")"
            #expect(result.status == 0, "\(report)", sourceLocation: sourceLocation)
            #expect(summary.hasSuffix(" passed, 0 failed") && lines.last == summary,
                    "the output does not end with '\(summaryPrefix)N passed, 0 failed':\n\(report)", sourceLocation: sourceLocation)
            #expect(lines.filter { $0.hasPrefix("ok ") }.count >= minimumChecks, "too few checks ran:\n\(report)", sourceLocation: sourceLocation)
            #expect(gateway.isRunning, "the gateway exited:\n\(stack.logTail(of: .gateway))", sourceLocation: sourceLocation)
        }
    }
}
