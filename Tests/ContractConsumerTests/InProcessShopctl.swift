import ArgumentParser
import Foundation
import RPCHTTP2
import ServiceTestSupport
@testable import shopctl
import Synchronization
import Testing
import RPC

/// shopctl run in-process the way the executable runs it (the command line parsed by
/// `Shopctl.parseAsRoot`, then `run()`), with a ``ProcessContext`` of its own: a scratch
/// `XDG_CONFIG_HOME` (so the credentials file is the test's, never the user's), standard
/// input given by the test, standard output captured line by line, and an interruption that
/// stands in for Ctrl-C. Nothing of the test process's own environment reaches the command.
///
/// Thread-safe: the output lives behind a `Mutex`; one command runs at a time.
final class InProcessShopctl: Sendable {
    /// The `XDG_CONFIG_HOME` of every run; removed by ``remove()``.
    let configHome: URL
    private let output = Mutex(Data())
    private let printed: (stream: AsyncStream<Void>, continuation: AsyncStream<Void>.Continuation)
    private let interruptions: (stream: AsyncStream<Void>, continuation: AsyncStream<Void>.Continuation)

    /// A shopctl with an empty config home.
    init() throws {
        configHome = try TestScratch.makeDirectory(prefix: "contract-shopctl")
        printed = AsyncStream<Void>.makeStream()
        interruptions = AsyncStream<Void>.makeStream()
    }

    /// Runs `body` with a fresh shopctl, then removes its config home.
    @discardableResult
    static func with<Result>(_ body: (InProcessShopctl) async throws -> Result) async throws -> Result {
        let shopctl = try InProcessShopctl()
        defer { shopctl.remove() }
        return try await body(shopctl)
    }

    /// Where shopctl keeps its files in these runs.
    var paths: ConfigPaths { ConfigPaths(environment: ["XDG_CONFIG_HOME": configHome.path]) }

    /// The credentials file of these runs.
    var store: CredentialsStore { CredentialsStore(paths: paths) }

    /// Stores `credentials` as a sign-in would have.
    func signIn(as credentials: StoredCredentials) throws {
        try store.save(credentials)
    }

    /// Runs `shopctl arguments --gateway gateway --json` with `input` on standard input and
    /// `environment` (`SHOP_ADMIN_API_KEY`, …) beside `XDG_CONFIG_HOME` and `HOME`.
    /// - Throws: what the command threw (a refused call's `RPCError`, a `ShopctlError`, an
    ///   ArgumentParser error for a bad command line).
    func run(
        _ arguments: [String], gateway: SocketAddressText, input: String = "", environment: [String: String] = [:]
    ) async throws {
        let context = ProcessContext(
            environment: environment.merging(["XDG_CONFIG_HOME": configHome.path, "HOME": configHome.path]) { $1 },
            readStandardInput: { Data(input.utf8) },
            writeStandardOutput: { [self] data in
                output.withLock { $0.append(data) }
                printed.continuation.yield()
            },
            interruptions: interruptions.stream)
        try await ProcessContext.$current.withValue(context) {
            let command = try Shopctl.parseAsRoot(
                GlobalOptions.hoisted(arguments + ["--gateway", gateway.description, "--json"]))
            guard var runnable = command as? any AsyncParsableCommand else {
                Issue.record("\(arguments) is not an async command")
                return
            }
            try await runnable.run()
        }
    }

    /// Runs a watch command until it has printed `lines` lines, then interrupts it as Ctrl-C
    /// would, and returns once the command has returned. A command that ends or fails before
    /// printing that much is not interrupted; everything it printed is in ``lines``.
    func watch(_ arguments: [String], gateway: SocketAddressText, until lines: Int) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                defer { self.printed.continuation.finish() }
                try await self.run(arguments, gateway: gateway)
            }
            group.addTask {
                for await _ in self.printed.stream where self.lines.count >= lines {
                    self.interruptions.continuation.yield()
                    return
                }
            }
            try await group.waitForAll()
        }
    }

    /// What the commands printed so far, one JSON document per line (`--json`).
    var lines: [String] {
        String(decoding: output.withLock { $0 }, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    /// The printed lines as JSON objects of `type`.
    func printed<Message: Decodable>(_ type: Message.Type) throws -> [Message] {
        try lines.map { try JSONDecoder().decode(type, from: Data($0.utf8)) }
    }

    /// Removes the config home.
    func remove() {
        try? FileManager.default.removeItem(at: configHome)
    }
}
