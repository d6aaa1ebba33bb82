import Contracts
import Foundation
import RPC
import ServiceTestSupport
import Testing

/// `shopctl top` (the executable) against real service processes serving their own `/metrics`.
@Suite("shopctl top against running services")
struct TopLiveTests {
    @Test("--once --json: catalog-svc's calls in the interval, half of them NOT_FOUND, with their durations")
    func figuresOfRunningServices() async throws {
        try await withServiceStack([.auth, .catalog]) { stack in
            let catalog = try stack.client(.catalog)
            let options = CallOptions(timeout: .seconds(10))
            // Calls all through the run, whenever its two scrapes fall: OK and NOT_FOUND in turn.
            let calling = Task {
                var made = 0
                while !Task.isCancelled {
                    let id = made.isMultiple(of: 2) ? 1 : 987_654
                    _ = try? await catalog.unary(CatalogContract.getProduct, GetProductRequest(id: id), options: options)
                    made += 1
                    try? await Task.sleep(for: .milliseconds(10))
                }
                return made
            }
            let root = try TestScratch.makeDirectory(prefix: "shopctl-top")
            defer { try? FileManager.default.removeItem(at: root) }
            let shopctl = ShopctlRunner(configHome: root, gateway: "127.0.0.1:1")
            let result = try await shopctl.run([
                "top", "--once", "--json", "--interval", "1", "--target", "catalog=127.0.0.1:\(try stack.service(.catalog).port)",
                "--target", "auth=127.0.0.1:\(try stack.service(.auth).port)",
            ])
            calling.cancel()
            let made = await calling.value
            #expect(result.status == 0, "\(result)")
            let document = try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any], "\(result)")
            let processes = try #require(document["processes"] as? [[String: Any]])
            #expect(processes.map { $0["name"] as? String } == ["catalog", "auth"])
            #expect(processes.map { $0["up"] as? Bool } == [true, true], "\(result)")
            let methods = try #require(processes[0]["methods"] as? [[String: Any]])
            let getProduct = try #require(methods.first { $0["method"] as? String == "GetProduct" }, "\(result)")
            #expect(getProduct["service"] as? String == CatalogContract.service)
            let figures = try #require(getProduct["figures"] as? [String: Any])
            let interval = try #require(processes[0]["intervalSeconds"] as? Double)
            let calls = try #require(figures["callsPerSecond"] as? Double) * interval
            #expect(calls >= 4 && calls <= Double(made), "\(calls) of \(made) calls")
            // OK and NOT_FOUND alternate, so the share of errors is a half, give or take one call.
            let errorRatio = try #require(figures["errorRatio"] as? Double)
            #expect(abs(errorRatio * calls - calls / 2) <= 1, "\(errorRatio) of \(calls)")
            let p50 = try #require(figures["p50Seconds"] as? Double)
            let p99 = try #require(figures["p99Seconds"] as? Double)
            #expect(p50 > 0 && p50 <= p99 && p99 < 10, "p50 \(p50), p99 \(p99)")
        }
    }
}
