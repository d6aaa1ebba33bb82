import Credentials
import Foundation
import ServiceTestSupport
import Synchronization
import Testing

/// At most one stack at a time: five processes each, on two cores.
let shopctlStackSlots = ConcurrencySlots(limit: 1)

/// The five executables of a stack, in start order (each needs the ones before it).
enum StackMember: String, CaseIterable, Sendable {
    case auth = "auth-svc"
    case catalog = "catalog-svc"
    case basket = "basket-svc"
    case order = "order-svc"
    case gateway = "gateway"
}

/// Runs `body` against auth-, catalog-, basket-, order-svc and the gateway, started as real
/// processes with empty data directories under one temporary root, and a `shopctl` runner
/// pointed at the gateway with its own config home. Stops every process and removes the
/// root afterwards, whether `body` succeeded or not; on failure the services' log tails go
/// to standard error.
func withShopctlStack(
    sourceLocation: SourceLocation = #_sourceLocation, _ body: (ShopctlStack) async throws -> Void
) async throws {
    let stack = try ShopctlStack()
    await shopctlStackSlots.acquire()
    var failure: (any Error)?
    do {
        try await stack.launchAll(sourceLocation: sourceLocation)
        try await body(stack)
    } catch {
        failure = error
    }
    if let failure {
        FileHandle.standardError.write(Data("shopctl stack logs after \(failure):\n\(stack.logTails())\n".utf8))
    }
    await stack.shutDown()
    await shopctlStackSlots.release()
    if let failure { throw failure }
}

/// A running stack: the processes, the keys they were given, and the auth signing key (so
/// tests can mint access tokens the gateway accepts, e.g. expired ones).
///
/// Thread-safe: the processes live behind a `Mutex`; everything else is immutable.
final class ShopctlStack: Sendable {
    /// The temporary directory holding every data directory and the config home.
    let root = TestScratch.directoryURL(prefix: "shopctl-tests")
    /// `SHOP_INTERNAL_API_KEY` of every process.
    let internalKey = TestScratch.randomKey()
    /// `SHOP_ADMIN_API_KEY` of catalog-svc and the gateway.
    let adminKey = TestScratch.randomKey()
    /// The key auth-svc signs access tokens with (`--signing-key`).
    let signingKey: SigningKey
    private let members = Mutex<[StackMember: ServiceProcess]>([:])

    /// A stack with nothing running yet.
    init() throws {
        signingKey = try SigningKey.generate()
    }

    /// The data directory of `member`.
    func dataDirectory(_ member: StackMember) -> URL { root.appendingPathComponent(member.rawValue) }

    /// Where auth-svc delivers its emails.
    var mailbox: AuthMailbox { AuthMailbox(authDataDirectory: dataDirectory(.auth)) }

    /// A `shopctl` runner against this stack's gateway, with config home `name` under the root.
    func shopctl(configHome name: String = "config") throws -> ShopctlRunner {
        ShopctlRunner(configHome: root.appendingPathComponent(name), gateway: try address(of: .gateway))
    }

    /// The standard error lines `member` has written so far.
    func logLines(of member: StackMember) -> [String] { members.withLock { $0[member] }?.log.lines ?? [] }

    /// Starts every member in order, each on an OS-chosen port.
    func launchAll(sourceLocation: SourceLocation) async throws {
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let keyFile = root.appendingPathComponent("signing-key.json")
        try signingKey.save(to: keyFile.path)
        for member in StackMember.allCases {
            let directory = dataDirectory(member)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            var arguments = ["--port", "0", "--data-dir", directory.path, "--log-level", "info"]
            var environment = ["SHOP_INTERNAL_API_KEY": internalKey]
            switch member {
            case .auth:
                arguments += ["--scrypt-log-n", "10", "--signing-key", keyFile.path]
            case .catalog:
                arguments += ["--auth-addr", try address(of: .auth)]
                environment["SHOP_ADMIN_API_KEY"] = adminKey
            case .basket:
                arguments += ["--auth-addr", try address(of: .auth), "--catalog-addr", try address(of: .catalog)]
            case .order:
                arguments += [
                    "--auth-addr", try address(of: .auth), "--catalog-addr", try address(of: .catalog),
                    "--basket-addr", try address(of: .basket),
                ]
            case .gateway:
                arguments += [
                    "--auth-addr", try address(of: .auth), "--catalog-addr", try address(of: .catalog),
                    "--basket-addr", try address(of: .basket), "--order-addr", try address(of: .order),
                ]
                environment["SHOP_ADMIN_API_KEY"] = adminKey
            }
            let process = try await ServiceProcess.launch(
                member.rawValue, arguments: arguments, environment: environment, sourceLocation: sourceLocation)
            members.withLock { $0[member] = process }
        }
    }

    /// The last log lines of every member, for failure reports.
    func logTails() -> String {
        let current = members.withLock { $0 }
        return StackMember.allCases.compactMap { member in
            current[member].map { "--- \(member.rawValue)\n\($0.log.tail(30))" }
        }.joined(separator: "\n")
    }

    /// Stops the members in reverse order and removes the root.
    func shutDown() async {
        let current = members.withLock { $0 }
        for member in StackMember.allCases.reversed() {
            guard let process = current[member] else { continue }
            await process.closeClient()
            await process.stop(patience: .seconds(4))
        }
        try? FileManager.default.removeItem(at: root)
    }

    /// `host:port` of the running `member`.
    func address(of member: StackMember) throws -> String {
        guard let process = members.withLock({ $0[member] }) else { throw StackLaunchError.notRunning(member.rawValue) }
        return process.address
    }
}

/// Why the stack could not provide a member.
enum StackLaunchError: Error {
    /// The named member was never started.
    case notRunning(String)
}
