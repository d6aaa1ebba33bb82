import Contracts
import Foundation
import RPC
import ServiceTestSupport
import Synchronization
import Testing

@testable import shopctl

/// Signing in as another account than the saved session's says that it replaces that session.
@Suite("sign-in over another account's saved session")
struct LoginReplaceTests {
    /// A session of `email` (user id `id`).
    private static func session(_ email: String, id: String) -> Session {
        var session = Session.sample(access: "access-\(id)", refresh: "refresh-\(id)")
        session.user.email = email
        session.user.id = id
        return session
    }

    /// Runs `AuthCommand.signedIn` for `session` over the saved `previous` and returns what it printed.
    private func signIn(_ session: Session, over previous: StoredCredentials?) async throws -> (String, StoredCredentials?) {
        let root = try TestScratch.makeDirectory(prefix: "shopctl-login")
        defer { try? FileManager.default.removeItem(at: root) }
        let paths = ConfigPaths(directory: root)
        let store = CredentialsStore(paths: paths)
        if let previous { try store.save(previous) }
        let printed = Mutex(Data())
        let process = ProcessContext(
            environment: ["XDG_CONFIG_HOME": root.path], readStandardInput: { Data() },
            writeStandardOutput: { data in printed.withLock { $0.append(data) } })
        let transport = ScriptedTransport { _, _ in [] }
        let context = CommandContext(
            gateway: GatewayClient(transport: transport, store: store, timeout: .seconds(5)), output: Output(json: false),
            paths: paths)
        let reply = Reply(message: session, raw: try .json(session))
        try await ProcessContext.$current.withValue(process) { try await AuthCommand.signedIn(reply, context: context) }
        return (String(decoding: printed.withLock { $0 }, as: UTF8.self), try store.load())
    }

    @Test("another account: says whose saved session it replaced, and keeps the new one")
    func anotherAccount() async throws {
        let previous = StoredCredentials(Self.session("a@x.example", id: "user-a"))
        let (output, stored) = try await signIn(Self.session("b@x.example", id: "user-b"), over: previous)
        #expect(output == "Signed in as b@x.example; replaced the saved session of a@x.example.\n")
        #expect(stored?.email == "b@x.example")
    }

    @Test("the same account, or none saved: just who is signed in")
    func sameAccount() async throws {
        let same = StoredCredentials(Self.session("a@x.example", id: "user-a"))
        #expect(try await signIn(Self.session("a@x.example", id: "user-a"), over: same).0 == "Signed in as a@x.example.\n")
        #expect(try await signIn(Self.session("a@x.example", id: "user-a"), over: nil).0 == "Signed in as a@x.example.\n")
    }
}
