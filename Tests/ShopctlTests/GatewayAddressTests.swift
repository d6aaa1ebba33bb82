import ArgumentParser
import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

@testable import shopctl

/// The gateway's address as people write it, and the failures of a gateway that is not there
/// told apart from a service behind it that is down.
@Suite("Gateway address: host:port, http://, https:// refused, unknown host and unreachable gateway")
struct GatewayAddressTests {
    @Test(
        "accepts host:port, http://host:port and a bare host (port 8080; 80 for http:// without a port)",
        arguments: [
            ("127.0.0.1:8080", "127.0.0.1", 8080), ("http://127.0.0.1:8080", "127.0.0.1", 8080),
            ("HTTP://shop.example:9000/", "shop.example", 9000), ("  localhost:7000 ", "localhost", 7000),
            ("shop.example", "shop.example", 8080), ("127.0.0.1", "127.0.0.1", 8080),
            ("http://shop.example", "shop.example", 80), ("[::1]:8080", "::1", 8080), ("[::1]", "::1", 8080),
            ("http://[::1]:9", "::1", 9),
        ])
    func accepts(text: String, host: String, port: Int) throws {
        let address = try GatewayAddress.parse(text)
        #expect(address == SocketAddressText(host: host, port: port), "\(text)")
    }

    @Test(
        "refuses what is not an address, as a usage error",
        arguments: ["", "http://", "host:port", "a b:80", "http://shop.example:8080/api", "ftp://shop.example:21",
            "host:0", "host:70000", "::1", "user@host:80", "shop.example:8080?x=1"])
    func refuses(text: String) {
        #expect(throws: ShopctlError.self, "\(text)") { try GatewayAddress.parse(text) }
        do {
            _ = try GatewayAddress.parse(text)
        } catch {
            #expect(error.status == .usage && error.reason == "USAGE", "\(text): \(error)")
        }
    }

    @Test(
        "a user name or password in the address is refused, and no message repeats it",
        arguments: ["http://ada:hunter2@127.0.0.1:8080", "ada:hunter2@shop.example", "https://ada:hunter2@shop.example",
            "http://ada:hunter2@shop.example:8080/api", "ada:hunter2@"])
    func userInfoRefused(text: String) throws {
        do {
            _ = try GatewayAddress.parse(text)
            Issue.record("\(text) was accepted")
        } catch {
            #expect(error.status == .usage, "\(text): \(error)")
            #expect(error.message.contains("user name or password"), "\(text): \(error)")
            #expect(!"\(error.message) \(error.hint ?? "")".contains("hunter2") && !error.message.contains("ada"), "\(text): \(error)")
        }
        // Nor does the command line's error.
        let context = ProcessContext(environment: ["XDG_CONFIG_HOME": "/tmp/none"], readStandardInput: { Data() }, writeStandardOutput: { _ in })
        ProcessContext.$current.withValue(context) {
            do {
                _ = try Shopctl.parseAsRoot(["health", "--gateway", text])
                Issue.record("\(text) was accepted")
            } catch {
                #expect(!Shopctl.message(for: error).contains("hunter2"), "\(text)")
            }
        }
    }

    @Test("an https:// address is refused: TLS is not supported yet, and deploy/README says how to put a proxy in front")
    func httpsRefused() {
        for text in ["https://shop.example", "HTTPS://127.0.0.1:8443/"] {
            do {
                _ = try GatewayAddress.parse(text)
                Issue.record("\(text) was accepted")
            } catch {
                #expect(error.reason == "TLS_NOT_SUPPORTED" && error.status == .usage)
                #expect(error.message.contains("does not speak TLS yet") && error.message.contains("deploy/README.md"))
            }
        }
    }

    @Test("a connection that never came up is the gateway's failure; the gateway's own UPSTREAM_UNAVAILABLE is kept")
    func classification() {
        let gateway = SocketAddressText(host: "shop.example", port: 8080)
        let unresolved = RPCError(
            code: .unavailable, reason: "UPSTREAM_UNAVAILABLE", message: "cannot resolve shop.example:8080",
            cause: ConnectFailure.hostNotFound(host: "shop.example"))
        #expect(GatewayFailure.classify(unresolved, gateway: gateway).reason == "GATEWAY_HOST_UNKNOWN")
        let refused = RPCError(
            code: .unavailable, reason: "UPSTREAM_UNAVAILABLE", message: "cannot connect",
            cause: ConnectFailure.connectFailed(errno: ECONNREFUSED))
        let classified = GatewayFailure.classify(refused, gateway: gateway)
        #expect(classified.reason == "GATEWAY_UNREACHABLE" && classified.code == .unavailable)
        #expect(classified.message == "Cannot reach the gateway at shop.example:8080: connection refused.")
        let timedOut = RPCError(code: .unavailable, reason: "UPSTREAM_UNAVAILABLE", message: "x", cause: ConnectFailure.timedOut)
        #expect(GatewayFailure.classify(timedOut, gateway: gateway).reason == "GATEWAY_UNREACHABLE")
        let deadline = RPCError(code: .deadlineExceeded, message: "The deadline passed.")
        #expect(GatewayFailure.classify(deadline, gateway: gateway).code == .deadlineExceeded)
        let refusedStream = RPCError(code: .unavailable, reason: "REFUSED_STREAM", message: "not processed")
        #expect(GatewayFailure.classify(refusedStream, gateway: gateway).reason == "REFUSED_STREAM")
        // Neither is retried: the same address fails the same way a moment later.
        #expect(!CallRetry.standard(for: CatalogContract.getProduct.info).isRetryable(classified))
    }

    @Test("the real shopctl: a closed port is GATEWAY_UNREACHABLE naming the address and `deploy/compose status`, exit 5")
    func unreachableLive() async throws {
        let port = try #require(try FreePorts.take(1).first)
        try await withRunner(gateway: "127.0.0.1:\(port)") { shopctl in
            for arguments in [["categories"], ["--gateway", "http://127.0.0.1:\(port)", "products", "list"]] {
                let result = try await shopctl.run(arguments)
                #expect(result.status == 5, "\(result)")
                #expect(result.errors.hasPrefix("error: GATEWAY_UNREACHABLE: Cannot reach the gateway at 127.0.0.1:\(port): "), "\(result)")
                #expect(result.errors.contains("`deploy/compose status`"), "\(result)")
                #expect(!result.errors.contains("UPSTREAM_UNAVAILABLE") && !result.errors.contains("errno"), "\(result)")
            }
        }
    }

    @Test("the real shopctl: a host name that does not resolve is GATEWAY_HOST_UNKNOWN, not 'No route to host', exit 5")
    func hostUnknownLive() async throws {
        try await withRunner(gateway: "nonexistent.invalid:8080") { shopctl in
            let result = try await shopctl.run(["categories"])
            #expect(result.status == 5, "\(result)")
            #expect(
                result.errors.hasPrefix("error: GATEWAY_HOST_UNKNOWN: The gateway's host name 'nonexistent.invalid' does not resolve"),
                "\(result)")
            #expect(!result.errors.contains("No route to host"), "\(result)")
        }
    }

    @Test("the real shopctl: --gateway https://… is refused at once with exit 2, before any connection")
    func httpsLive() async throws {
        try await withRunner(gateway: "127.0.0.1:1") { shopctl in
            let result = try await shopctl.run(["--gateway", "https://shop.example", "categories"])
            #expect(result.status == 2, "\(result)")
            #expect(result.errors.hasPrefix("error: shopctl does not speak TLS yet"), "\(result)")
            #expect(result.errors.split(separator: "\n").count == 1, "\(result)")
        }
    }

    /// Runs `body` with a runner of a scratch config home calling `gateway`.
    private func withRunner(gateway: String, _ body: (ShopctlRunner) async throws -> Void) async throws {
        let root = try TestScratch.makeDirectory(prefix: "shopctl-gateway-address")
        defer { try? FileManager.default.removeItem(at: root) }
        try await body(ShopctlRunner(configHome: root, gateway: gateway))
    }
}
