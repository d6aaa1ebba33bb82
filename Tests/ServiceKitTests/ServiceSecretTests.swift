import Foundation
import ServiceKit
import ServiceTestSupport
import Synchronization
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

    @Test("the internal key: SHOP_INTERNAL_API_KEY when set, else internal-api-key in the data directory")
    func internalKey() throws {
        let directory = try TestScratch.makeDirectory(prefix: "service-secret-internal")
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(try ServiceSecret.internalKey(dataDirectory: directory.path, environment: ["SHOP_INTERNAL_API_KEY": "given"]) == "given")
        let generated = try ServiceSecret.internalKey(dataDirectory: directory.path, environment: [:])
        let written = try String(contentsOfFile: directory.appendingPathComponent("internal-api-key").path, encoding: .utf8)
        #expect(generated == written)
        #expect(try ServiceSecret.internalKey(dataDirectory: directory.path, environment: [:]) == generated)
    }

    @Test("services starting at once with no key file all end up with the one key that was written first")
    func concurrentStarts() throws {
        let directory = try TestScratch.makeDirectory(prefix: "service-secret-race")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("admin-api-key").path
        let results = Mutex<[Result<String, StartupError>]>([])
        DispatchQueue.concurrentPerform(iterations: 16) { _ in
            let result = Result { () throws(StartupError) in try ServiceSecret.resolve(environmentName: "K", path: path, environment: [:]) }
            results.withLock { $0.append(result) }
        }
        let values = try results.withLock { try $0.map { try $0.get() } }
        let written = try String(contentsOfFile: path, encoding: .utf8)
        #expect(values.count == 16 && values.allSatisfy { $0 == written }, "\(Set(values)) vs \(written)")
    }
}
