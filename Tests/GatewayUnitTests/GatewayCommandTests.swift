import ArgumentParser
import Foundation
@testable import gateway
import Testing

/// The gateway's own flags are checked before anything starts.
@Suite("gateway command-line flags")
struct GatewayCommandTests {
    @Test("a rate limit of 0 (off) or a sensible rate is accepted", arguments: ["0", "0.001", "0.5", "50", "1000000"])
    func rateAccepted(rate: String) throws {
        let command = try GatewayCommand.parse(["--rate-limit", rate])
        #expect(command.rateLimit == Double(rate))
    }

    @Test(
        "a rate limit the token bucket cannot represent is refused with a message, not a crash at start",
        arguments: ["-1", "1e-12", "0.0001", "2e6", "1e300", "inf", "nan"])
    func rateRefused(rate: String) {
        do {
            _ = try GatewayCommand.parse(["--rate-limit=\(rate)"])
            Issue.record("--rate-limit \(rate) was accepted")
        } catch {
            let message = GatewayCommand.message(for: error)
            #expect(message.contains("--rate-limit must be 0 (no limit) or between 0.001 and 1000000"), "\(message)")
        }
    }

    @Test("event loops are pinned to cores unless --no-pin-loops")
    func pinLoops() throws {
        #expect(try GatewayCommand.parse([]).pinLoops == (ProcessInfo.processInfo.environment["SHOP_GATEWAY_PIN_LOOPS"] != "0"))
        #expect(try GatewayCommand.parse(["--pin-loops"]).pinLoops)
        #expect(try !GatewayCommand.parse(["--no-pin-loops"]).pinLoops)
    }

    @Test("the watch cap is 10 per user unless set, and must leave room for one watch")
    func watchCap() throws {
        let unset = ProcessInfo.processInfo.environment["SHOP_GATEWAY_MAX_WATCHES_PER_USER"] == nil
        if unset { #expect(try GatewayCommand.parse([]).maxWatchesPerUser == 10) }
        #expect(try GatewayCommand.parse(["--max-watches-per-user", "3"]).maxWatchesPerUser == 3)
        do {
            _ = try GatewayCommand.parse(["--max-watches-per-user", "0"])
            Issue.record("--max-watches-per-user 0 was accepted")
        } catch {
            #expect(GatewayCommand.message(for: error).contains("--max-watches-per-user must be at least 1"))
        }
    }

    @Test("--cors-origin is repeatable and takes origins only; --web-root must be a directory; --no-web turns the storefront off")
    func webEdgeFlags() throws {
        let command = try GatewayCommand.parse(["--cors-origin", "https://shop.example", "--cors-origin", "http://localhost:3000"])
        #expect(command.corsOrigins == ["https://shop.example", "http://localhost:3000"])
        for bad in ["shop.example", "ftp://shop.example", "https://shop.example/path", "https://shop.example?x=1"] {
            do {
                _ = try GatewayCommand.parse(["--cors-origin", bad])
                Issue.record("--cors-origin \(bad) was accepted")
            } catch {
                #expect(GatewayCommand.message(for: error).contains("is not an origin"), "\(bad)")
            }
        }
        do {
            _ = try GatewayCommand.parse(["--web-root", "/nonexistent-web-root"])
            Issue.record("a missing --web-root was accepted")
        } catch {
            #expect(GatewayCommand.message(for: error).contains("is not a directory"))
        }
        #expect(try GatewayCommand.parse(["--web-root", NSTemporaryDirectory()]).webRoot == NSTemporaryDirectory())
        #expect(try GatewayCommand.parse(["--no-web"]).noWeb)
    }
}
