import Contracts
import Credentials
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

/// The signing key auth-svc makes for itself: generated on first start into the data
/// directory with mode 0600, kept across restarts, and rotated by retiring the file.
@Suite("Signing key")
struct SigningKeyLiveTests {
    /// Starts auth-svc on `directory` without `--signing-key`, runs `body`, stops it.
    func withService(in directory: URL, _ body: (ServiceProcess) async throws -> Void) async throws {
        let service = try await ServiceProcess.launch(
            "auth-svc", arguments: ["--port", "0", "--data-dir", directory.path, "--scrypt-log-n", "10"],
            environment: ["SHOP_INTERNAL_API_KEY": TestScratch.randomKey()])
        do {
            try await body(service)
        } catch {
            _ = await service.stop()
            throw error
        }
        _ = await service.stop()
    }

    /// The kids GetJwks publishes.
    func publishedKids(_ service: ServiceProcess) async throws -> [String] {
        try await service.client.unary(AuthContract.getJwks, Empty(), options: CallOptions(timeout: .seconds(10))).keys
            .map(\.kid)
    }

    @Test("a key is generated into the data directory with mode 0600, kept on restart, and a retired one stays published")
    func generatedKeptRotated() async throws {
        let directory = try TestScratch.makeDirectory(prefix: "auth-signing-key")
        defer { try? FileManager.default.removeItem(at: directory) }
        let keyFile = directory.appendingPathComponent("signing-key.json")

        var firstKid = ""
        try await withService(in: directory) { service in
            let attributes = try FileManager.default.attributesOfItem(atPath: keyFile.path)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
            firstKid = try SigningKey.load(from: keyFile.path).kid
            let kids = try await publishedKids(service)
            #expect(kids == [firstKid])
        }
        try await withService(in: directory) { service in
            let kids = try await publishedKids(service)
            #expect(kids == [firstKid], "the same key after a restart")
        }

        // Rotation: retire the key file; the next start makes a new key and still publishes the old one.
        let retired = directory.appendingPathComponent("retired-signing-keys")
        try FileManager.default.createDirectory(at: retired, withIntermediateDirectories: true)
        try FileManager.default.moveItem(at: keyFile, to: retired.appendingPathComponent("old.json"))
        try await withService(in: directory) { service in
            let kids = try await publishedKids(service)
            let newKid = try SigningKey.load(from: keyFile.path).kid
            #expect(newKid != firstKid)
            #expect(kids == [newKid, firstKid], "the current key first, then the retired one")
        }
    }
}
