import Foundation
import ServiceKit
import ServiceTestSupport
import Testing

/// Where a service's API keys come from (DESIGN.md "Security").
@Suite("ServiceSecret: keys from the environment or the data directory")
struct ServiceSecretTests {
    @Test("a key from the environment loses surrounding whitespace; a blank one counts as unset")
    func fromEnvironment() {
        #expect(ServiceSecret.fromEnvironment("K", environment: ["K": "s3cret\n"]) == "s3cret")
        #expect(ServiceSecret.fromEnvironment("K", environment: ["K": "  s3 cret \t"]) == "s3 cret")
        #expect(ServiceSecret.fromEnvironment("K", environment: ["K": " \n"]) == nil)
        #expect(ServiceSecret.fromEnvironment("K", environment: [:]) == nil)
    }

    @Test("without the environment, a key is generated once into a 0600 file and read back after")
    func generatedOnce() throws {
        let directory = try TestScratch.makeDirectory(prefix: "service-secret")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("internal-api-key").path
        let first = try ServiceSecret.resolve(environmentName: "K", path: path, environment: [:])
        #expect(first.count == 64 && first.allSatisfy(\.isHexDigit))
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(try ServiceSecret.resolve(environmentName: "K", path: path, environment: [:]) == first)
        #expect(try ServiceSecret.resolve(environmentName: "K", path: path, environment: ["K": " given\n"]) == "given")
    }
}
