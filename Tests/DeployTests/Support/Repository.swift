import Foundation

/// The repository as the deploy tests read it: files found from this file's path (so the
/// tests run from any working directory) and the executables Package.swift declares.
enum Repository {
    /// The repository's top directory (`Tests/DeployTests/Support/` is three levels down).
    static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The file or directory at `path`, relative to the top directory.
    static func url(_ path: String) -> URL {
        root.appendingPathComponent(path)
    }

    /// The text of the file at `path`, relative to the top directory.
    static func text(_ path: String) throws -> String {
        try String(contentsOf: url(path), encoding: .utf8)
    }

    /// The name of every `.executableTarget` in Package.swift, in the order declared.
    static func executableTargets() throws -> [String] {
        let manifest = try text("Package.swift")
        return manifest.matches(of: #/\.executableTarget\(\s*name:\s*"([^"]+)"/#).map { String($0.output.1) }
    }

    /// The executable targets a deployment leaves out: `bench-server` only serves measurements
    /// (Benchmarks/README.md), `shopper-journey` is StorefrontKit's command-line example.
    static let notShipped: Set<String> = ["bench-server", "shopper-journey"]

    /// The executables a deployment ships: every executable target but ``notShipped``.
    static func shippedExecutables() throws -> [String] {
        try executableTargets().filter { !notShipped.contains($0) }
    }
}

/// The five services as DESIGN.md fixes them, in start order: "Default ports: gateway 8080,
/// auth-svc 7001, catalog-svc 7002, basket-svc 7003, order-svc 7004."
enum StorefrontServices {
    /// Each service's name (its executable and its Kubernetes name) and default port.
    static let all: [(name: String, port: Int)] = [
        ("auth-svc", 7001), ("catalog-svc", 7002), ("basket-svc", 7003), ("order-svc", 7004), ("gateway", 8080),
    ]

    /// The services that keep data: a SQLite database in their data directory, or their own
    /// schema of a PostgreSQL database (`--database-url`).
    static let stateful: Set<String> = ["auth-svc", "catalog-svc", "basket-svc", "order-svc"]

    /// The PostgreSQL schema each stateful service keeps its tables in (issue 30: "Each service
    /// owns its own schema").
    static let schemas: [String: String] = ["auth-svc": "auth", "catalog-svc": "catalog", "basket-svc": "basket", "order-svc": "orders"]

    /// The default port of `name`.
    static func port(of name: String) -> Int? {
        all.first { $0.name == name }?.port
    }

    /// The names of `all`.
    static var names: [String] { all.map(\.name) }
}
