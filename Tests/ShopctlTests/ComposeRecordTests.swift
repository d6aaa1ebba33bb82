import Foundation
import ServiceTestSupport
import Testing

@testable import shopctl

/// `compose.json`, written by `deploy/compose up`: where its mails land, read to tell people
/// after a sign-up; a missing or garbled record is no error.
@Suite("ComposeRecord: where deploy/compose's mails land")
struct ComposeRecordTests {
    private static let record = """
        {"gateway": "127.0.0.1:8080", "mailDir": "/srv/shop/.data/auth-svc/mail",
         "adminKeyFile": "/srv/shop/.data/admin-api-key", "webURL": "http://127.0.0.1:8080/"}
        """

    /// Runs `body` with a config home holding `compose.json` of `contents` (none when nil).
    private func withConfigHome<Result>(compose contents: String?, _ body: (ConfigPaths) throws -> Result) throws -> Result {
        let home = try TestScratch.makeDirectory(prefix: "shopctl-compose")
        defer { try? FileManager.default.removeItem(at: home) }
        let environment = ["XDG_CONFIG_HOME": home.path, "HOME": home.path]
        let paths = ConfigPaths(environment: environment)
        if let contents {
            try FileManager.default.createDirectory(at: paths.composeRecord.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(contents.utf8).write(to: paths.composeRecord)
        }
        let context = ProcessContext(environment: environment, readStandardInput: { Data() }, writeStandardOutput: { _ in })
        return try ProcessContext.$current.withValue(context) { try body(paths) }
    }

    @Test("loads the record compose writes; a missing, garbled or incomplete one is nil")
    func loads() throws {
        let record = try withConfigHome(compose: Self.record) { ComposeRecord.load(paths: $0) }
        #expect(record?.gateway == "127.0.0.1:8080")
        #expect(record?.mailDir == "/srv/shop/.data/auth-svc/mail")
        #expect(record?.adminKeyFile == "/srv/shop/.data/admin-api-key")
        for contents in [nil, "", "{not json", "[]", #"{"mailDir": "/m"}"#] {
            #expect(try withConfigHome(compose: contents) { ComposeRecord.load(paths: $0) } == nil, "\(contents ?? "none")")
        }
    }

    @Test("the gateway is compared however it is written")
    func sameGateway() throws {
        let record = try #require(try withConfigHome(compose: Self.record) { ComposeRecord.load(paths: $0) })
        #expect(record.serves(gateway: "127.0.0.1:8080"))
        #expect(record.serves(gateway: "http://127.0.0.1:8080/"))
        #expect(!record.serves(gateway: "127.0.0.1:9090"))
        // A bare host is the gateway's port 8080, as --gateway reads it.
        #expect(record.serves(gateway: "127.0.0.1"))
        #expect(!record.serves(gateway: "http://127.0.0.1"))
        let named = ComposeRecord(gateway: "LocalHost:8080")
        #expect(named.serves(gateway: "http://localhost:8080") && named.serves(gateway: "localhost"))
        #expect(!named.serves(gateway: "not an address"))
    }

    @Test("after a sign-up: where the email is when compose's gateway is in use, nothing otherwise")
    func signUpNote() throws {
        let text = "Created the account ada@example.com."
        let note = try withConfigHome(compose: Self.record) { paths in
            AuthCommand.withMailNote(text, paths: paths, gateway: "127.0.0.1:8080", kind: "verification", command: "shopctl auth verify TOKEN")
        }
        #expect(
            note == text + "\nThe verification email is in /srv/shop/.data/auth-svc/mail (deploy/compose's mail directory): "
                + "open the newest .eml and follow its link, or run `shopctl auth verify TOKEN`.")
        let elsewhere = try withConfigHome(compose: Self.record) { paths in
            AuthCommand.withMailNote(text, paths: paths, gateway: "10.0.0.5:8080", kind: "verification", command: "shopctl auth verify TOKEN")
        }
        #expect(elsewhere == text)
        let none = try withConfigHome(compose: nil) { paths in
            AuthCommand.withMailNote(text, paths: paths, gateway: "127.0.0.1:8080", kind: "verification", command: "shopctl auth verify TOKEN")
        }
        #expect(none == text)
    }
}
