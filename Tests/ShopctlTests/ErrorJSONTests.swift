import Contracts
import Foundation
import RPC
import ServiceTestSupport
import Testing

@testable import shopctl

/// With `--json`, a failure is one JSON object on standard error, for scripts; without it,
/// one line — argument mistakes and failures alike.
@Suite("Errors with --json: {\"error\": {code, reason, message, hint}} on standard error")
struct ErrorJSONTests {
    /// The `error` object of `text`, one line of JSON.
    private func errorObject(_ text: String) throws -> [String: Any] {
        let line = text.hasSuffix("\n") ? String(text.dropLast()) : text
        #expect(!line.contains("\n"), "one line: \(text)")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(Set(document.keys) == ["error"])
        let error = try #require(document["error"] as? [String: Any])
        #expect(Set(error.keys) == ["code", "reason", "message", "hint"], "\(error)")
        return error
    }

    @Test("a server's error: the code's name, its reason, its message and the hint")
    func serverError() throws {
        let report = ErrorReport(CatalogReason.productNotFound.error("No product has id 999."))
        let error = try errorObject(report.json)
        #expect(error["code"] as? String == "NOT_FOUND")
        #expect(error["reason"] as? String == "PRODUCT_NOT_FOUND")
        #expect(error["message"] as? String == "No product has id 999.")
        #expect(error["hint"] as? String == "check the id with `shopctl products list`")
    }

    @Test("without a hint the hint is null; shopctl's own failures carry the code of their class")
    func ownErrors() throws {
        let plain = try errorObject(ErrorReport(RPCError(code: .internal, message: "first\nsecond")).json)
        #expect(plain["hint"] is NSNull && plain["message"] as? String == "first second" && plain["reason"] as? String == "INTERNAL")
        let notSignedIn = try errorObject(ErrorReport(ShopctlError.notSignedIn).json)
        #expect(notSignedIn["code"] as? String == "UNAUTHENTICATED" && notSignedIn["reason"] as? String == "NOT_SIGNED_IN")
        let usage = try errorObject(ErrorReport(ShopctlError.usage("Bad.")).json)
        #expect(usage["code"] as? String == "INVALID_ARGUMENT" && usage["reason"] as? String == "USAGE")
    }

    @Test("the real shopctl: a usage error and an unreachable gateway are one JSON object each, nothing on standard output")
    func live() async throws {
        let root = try TestScratch.makeDirectory(prefix: "shopctl-error-json")
        defer { try? FileManager.default.removeItem(at: root) }
        let port = try #require(try FreePorts.take(1).first)
        let shopctl = ShopctlRunner(configHome: root, gateway: "127.0.0.1:\(port)")

        let usage = try await shopctl.run(["--json", "basket", "add", "3", "--count", "11"])
        #expect(usage.status == 2 && usage.output.isEmpty, "\(usage)")
        let usageError = try errorObject(usage.errors)
        #expect(usageError["code"] as? String == "INVALID_ARGUMENT" && usageError["reason"] as? String == "USAGE", "\(usage)")
        #expect(usageError["hint"] as? String == "see `shopctl basket add --help`", "\(usage)")

        let down = try await shopctl.run(["categories", "--json"])
        #expect(down.status == 5 && down.output.isEmpty, "\(down)")
        let downError = try errorObject(down.errors)
        #expect(downError["code"] as? String == "UNAVAILABLE" && downError["reason"] as? String == "GATEWAY_UNREACHABLE", "\(down)")

        // Without --json, the same usage error is one line, as every failure is.
        let line = try await shopctl.run(["basket", "add", "3", "--count", "11"])
        #expect(line.errors.split(separator: "\n").count == 1 && line.errors.hasPrefix("error: --count must be 1 to 10"), "\(line)")
        #expect(line.errors.hasSuffix("(see `shopctl basket add --help`)\n"), "\(line)")
        let missing = try await shopctl.run(["basket", "set", "abcd", "-1"])
        #expect(missing.errors.split(separator: "\n").count == 1, "\(missing)")
        #expect(missing.errors.contains("'-1' was read as an option: no argument of shopctl takes a negative number"), "\(missing)")
    }
}
