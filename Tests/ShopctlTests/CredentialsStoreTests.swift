import Foundation
import ServiceTestSupport
import Testing

@testable import shopctl

/// `credentials.json`: where it lives, who may read it, and that it is never seen half-written.
@Suite("CredentialsStore: XDG path, mode 0600, atomic replacement")
struct CredentialsStoreTests {
    private static let sample = StoredCredentials(
        accessToken: "access-1", refreshToken: "refresh-1", userId: "user-1", email: "ada@example.com")

    @Test("lives in $XDG_CONFIG_HOME/shopctl, or ~/.config/shopctl when it is unset, empty or relative")
    func paths() {
        let xdg = ConfigPaths(environment: ["XDG_CONFIG_HOME": "/tmp/xdg", "HOME": "/home/ada"])
        #expect(xdg.credentials.path == "/tmp/xdg/shopctl/credentials.json")
        #expect(xdg.credentialsLock.path == "/tmp/xdg/shopctl/credentials.lock")
        #expect(xdg.profile.path == "/tmp/xdg/shopctl/profile.json")
        for environment in [["HOME": "/home/ada"], ["XDG_CONFIG_HOME": "", "HOME": "/home/ada"],
            ["XDG_CONFIG_HOME": "relative/dir", "HOME": "/home/ada"]]
        {
            #expect(ConfigPaths(environment: environment).credentials.path == "/home/ada/.config/shopctl/credentials.json")
        }
    }

    @Test("writes the file 0600 in a directory 0700, and reads back what it wrote")
    func modes() throws {
        let root = try TestScratch.makeDirectory(prefix: "shopctl-credentials")
        defer { try? FileManager.default.removeItem(at: root) }
        let store = CredentialsStore(paths: ConfigPaths(environment: ["XDG_CONFIG_HOME": root.path]))
        #expect(try store.load() == nil)
        try store.save(Self.sample)
        #expect(try mode(of: store.file.path) == 0o600)
        #expect(try mode(of: store.paths.directory.path) == 0o700)
        #expect(try store.load() == Self.sample)
        var changed = Self.sample
        changed.accessToken = "access-2"
        try store.save(changed)
        #expect(try store.load() == changed)
        #expect(try mode(of: store.file.path) == 0o600)
        // Nothing but the file itself is left behind in the directory.
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.paths.directory.path) == ["credentials.json"])
        try store.delete()
        #expect(try store.load() == nil)
        try store.delete()  // deleting nothing is fine
    }

    @Test("tightens a directory that exists with a looser mode")
    func tightensDirectory() throws {
        let root = try TestScratch.makeDirectory(prefix: "shopctl-credentials")
        defer { try? FileManager.default.removeItem(at: root) }
        let paths = ConfigPaths(environment: ["XDG_CONFIG_HOME": root.path])
        try FileManager.default.createDirectory(
            at: paths.directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        try CredentialsStore(paths: paths).save(Self.sample)
        #expect(try mode(of: paths.directory.path) == 0o700)
    }

    @Test("a named profile's credentials are created with every new directory on the way 0700")
    func profileDirectories() throws {
        let root = try TestScratch.makeDirectory(prefix: "shopctl-credentials")
        defer { try? FileManager.default.removeItem(at: root) }
        let paths = ConfigPaths(environment: ["XDG_CONFIG_HOME": root.path], profile: try ProfileName(validating: "staging"))
        let store = CredentialsStore(paths: paths)
        try store.save(Self.sample)
        #expect(store.file.path == root.path + "/shopctl/profiles/staging/credentials.json")
        for directory in ["shopctl", "shopctl/profiles", "shopctl/profiles/staging"] {
            #expect(try mode(of: root.appendingPathComponent(directory).path) == 0o700, "\(directory)")
        }
        #expect(try mode(of: store.file.path) == 0o600)
    }

    @Test("a reader never sees a half-written file while another writer replaces it")
    func atomicReplacement() async throws {
        let root = try TestScratch.makeDirectory(prefix: "shopctl-credentials")
        defer { try? FileManager.default.removeItem(at: root) }
        let store = CredentialsStore(paths: ConfigPaths(environment: ["XDG_CONFIG_HOME": root.path]))
        // Every version the writer stores has equal tokens; a torn read would break that or not decode.
        func version(_ round: Int) -> StoredCredentials {
            // Long tokens make a torn write likely to show if the write were not atomic.
            let token = String(repeating: "t\(round % 10)", count: 4000)
            return StoredCredentials(accessToken: token, refreshToken: token, userId: "u", email: "e@x.io")
        }
        try store.save(version(0))
        let failures = Counter()
        let writes = Counter()
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for round in 1...200 {
                    do {
                        try store.save(version(round))
                        writes.increment()
                    } catch {
                        failures.increment()
                    }
                }
            }
            group.addTask {
                for _ in 0..<400 {
                    do {
                        guard let loaded = try store.load() else {
                            failures.increment()
                            continue
                        }
                        if loaded.accessToken != loaded.refreshToken { failures.increment() }
                    } catch {
                        failures.increment()
                    }
                }
            }
        }
        #expect(failures.value == 0)
        #expect(writes.value == 200)
    }

    @Test("a file that is not credentials asks for a new sign-in instead of crashing")
    func unreadableFile() throws {
        let root = try TestScratch.makeDirectory(prefix: "shopctl-credentials")
        defer { try? FileManager.default.removeItem(at: root) }
        let store = CredentialsStore(paths: ConfigPaths(environment: ["XDG_CONFIG_HOME": root.path]))
        try PrivateFile.write(Data("not json".utf8), to: store.file)
        let error = #expect(throws: ShopctlError.self) { try store.load() }
        #expect(error?.status == .authentication)
        #expect(error?.hint?.contains("shopctl auth login") == true)
    }

    @Test("a session that ended is forgotten only while the file holds it: a newer sign-in of the same user survives")
    func forgetsOnlyTheSessionInUse() async throws {
        let root = try TestScratch.makeDirectory(prefix: "shopctl-credentials")
        defer { try? FileManager.default.removeItem(at: root) }
        let paths = ConfigPaths(environment: ["XDG_CONFIG_HOME": root.path])
        let old = StoredCredentials(accessToken: "a-1", refreshToken: "r-1", userId: "u-1", email: "ada@example.com")
        let newer = StoredCredentials(accessToken: "a-2", refreshToken: "r-2", userId: "u-1", email: "ada@example.com")
        try CredentialsStore(paths: paths).save(old)

        // This process read the old session; another signs the same user out and in again.
        let watching = CredentialsStore(paths: paths)
        #expect(try watching.load() == old)
        try await CredentialsStore(paths: paths).replaceSession(with: newer)
        try await watching.forgetSessionInUse()
        #expect(try CredentialsStore(paths: paths).load() == newer)

        // The file still holds the session this process read: it goes.
        let current = CredentialsStore(paths: paths)
        #expect(try current.load() == newer)
        try await current.forgetSessionInUse()
        #expect(try CredentialsStore(paths: paths).load() == nil)

        // A process that read nothing has nothing to forget.
        try CredentialsStore(paths: paths).save(old)
        try await CredentialsStore(paths: paths).forgetSessionInUse()
        #expect(try CredentialsStore(paths: paths).load() == old)
    }

    private func mode(of path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.posixPermissions] as? Int ?? -1) & 0o777
    }
}
