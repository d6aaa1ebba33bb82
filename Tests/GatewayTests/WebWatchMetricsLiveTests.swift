import Contracts
import Foundation
import RPC
import ServiceTestSupport
import Testing

/// A watch over the web edge whose client goes away: the transport ends it before the handler
/// notes anything, and it is still a call finished — `CANCELLED` — not a call in flight forever.
@Suite("Web edge: abandoned watches are counted finished")
struct WebWatchMetricsLiveTests {
    @Test("WatchBasket over Connect, the client gone after a second (HTTP/1.1, then HTTP/2): counted started and finished CANCELLED")
    func abandonedWatches() async throws {
        try await withLiveGateway { stack in
            let port = try stack.service(.gateway).port
            let shopper = try await stack.newShopper()
            let scratch = try TestScratch.makeDirectory(prefix: "abandoned-watch")
            defer { try? FileManager.default.removeItem(at: scratch) }
            let bodyFile = scratch.appendingPathComponent("request")
            try ConnectEnvelopeBytes.frame(Data("{}".utf8)).write(to: bodyFile)
            let watch = "service=\"\(BasketContract.service)\",method=\"WatchBasket\""
            for (index, version) in ["--http1.1", "--http2-prior-knowledge"].enumerated() {
                // No deadline: only the client's leaving (curl's --max-time) ends it.
                let ended = try await Command.run(
                    "curl", [
                        "-s", "-N", version, "--max-time", "1", "-o", "/dev/null",
                        "-H", "content-type: application/connect+json", "-H", "connect-protocol-version: 1",
                        "-H", "authorization: Bearer \(shopper.accessToken)",
                        "--data-binary", "@\(bodyFile.path)", "http://127.0.0.1:\(port)\(BasketContract.watchBasket.path)",
                    ], timeout: .seconds(20))
                #expect(ended.status == 28, "curl should have given up at its --max-time: \(ended)")
                let counted = await eventually(within: .seconds(10)) {
                    guard let scrape = try? await MetricsScrape.fetch(port: port) else { return false }
                    return scrape.value("rpc_server_calls_started_total{\(watch)}") == Double(index + 1)
                        && scrape.value("rpc_server_calls_total{\(watch),code=\"CANCELLED\"}") == Double(index + 1)
                }
                let scrape = try await MetricsScrape.fetch(port: port)
                #expect(counted, "\(version): \(scrape.lines(of: "rpc_server_calls_total").filter { $0.contains("WatchBasket") })")
            }
        }
    }
}
