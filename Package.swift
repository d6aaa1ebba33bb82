// swift-tools-version: 6.1
import PackageDescription

/// Settings every target of ours compiles with (see STYLE.md, "Files and names").
let strictSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]
/// The runtime's modules also take Swift 6.2's nonisolated(nonsending) default: an async
/// function runs on its caller's executor. Nothing here is actor-isolated, so behaviour is
/// the same, but a call no longer checks at every `await` whether to hop (that check, under a
/// lock in the concurrency runtime, was ~9 % of bench-server's CPU at 16x16).
let runtimeSettings = strictSettings + [.enableUpcomingFeature("NonisolatedNonsendingByDefault")]
/// Release builds of the HTTP/2 runtime skip Swift's dynamic exclusivity checks (a
/// thread-local lookup on every access of a class's stored property): its state is loop- or
/// call-confined and never accessed re-entrantly, and debug builds — every test run — keep the
/// checks. (Only for the server side: a target a client app depends on, such as JSON, may not
/// carry unsafe flags, so JSON marks its few hot properties `@exclusivity(unchecked)` instead.) What it buys: `Benchmarks/gateway-ab` (Benchmarks/HISTORY.md, 2026-11-27,
/// 89557bf): with the checks on, the gateway forwards about a tenth fewer calls.
let uncheckedExclusivityInRelease: [SwiftSetting] = [
    .unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release)),
]

let log = Target.Dependency.product(name: "Logging", package: "swift-log")
let argumentParser = Target.Dependency.product(name: "ArgumentParser", package: "swift-argument-parser")
let crypto = Target.Dependency.product(name: "Crypto", package: "swift-crypto")
let cryptoExtras = Target.Dependency.product(name: "CryptoExtras", package: "swift-crypto")

let package = Package(
    name: "Storefront",
    // StorefrontKit's floor: what an app shipping it supports. The servers build for Linux only,
    // where this is ignored (their `Synchronization` uses need macOS 15 / iOS 18 on Apple).
    platforms: [.macOS(.v13), .iOS(.v16)],
    products: [
        // The client library a shop app links (Clients/StorefrontKit/README.md).
        .library(name: "StorefrontKit", targets: ["StorefrontKit"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
    ],
    targets: [
        // C libraries and Linux headers enter here and nowhere else.
        .systemLibrary(
            name: "CNGHTTP2", path: "Shared/CNGHTTP2", pkgConfig: "libnghttp2",
            providers: [.apt(["libnghttp2-dev"])]),
        .systemLibrary(name: "CLinux", path: "Shared/CLinux"),
        .systemLibrary(name: "CHTTPParser", path: "Shared/CHTTPParser", providers: [.apt(["libhttp-parser-dev"])]),
        .systemLibrary(
            name: "CSQLite", path: "Shared/CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(
            name: "CLibPQ", path: "Shared/CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),

        // The one POSIX layer: the syscall wrapper (EINTR, errno, EBADF), atomic file writes, sockets.
        .target(name: "SystemCalls", dependencies: ["CLinux"], path: "Shared/SystemCalls", swiftSettings: strictSettings),
        // JSON: our encoder and decoder (Codable, sorted keys, byte-stable) and `JSONValue`.
        .target(name: "JSON", path: "Shared/JSON", swiftSettings: runtimeSettings),
        // RPC semantics: status and error model, metadata, descriptors, router, codec, framing.
        .target(name: "RPC", dependencies: ["JSON", log], path: "Shared/RPC", swiftSettings: runtimeSettings),
        // Sockets, epoll loops and nghttp2 sessions: the server and the client.
        .target(
            name: "RPCHTTP2", dependencies: ["RPC", "Telemetry", "SystemCalls", "CNGHTTP2", "CHTTPParser", "CLinux", log], path: "Shared/RPCHTTP2",
            exclude: ["README.md"], swiftSettings: runtimeSettings + uncheckedExclusivityInRelease),
        // PostgreSQL through libpq: a blocking connection, parameters apart from the SQL, SQLSTATE
        // errors — the second storage backend's foundation (issue 30).
        .target(name: "Telemetry", dependencies: ["RPC", "SystemCalls"], path: "Shared/Telemetry", swiftSettings: strictSettings),

        .target(name: "PostgreSQL", dependencies: ["CLibPQ"], path: "Shared/PostgreSQL", swiftSettings: strictSettings),
        // SQLite: connections, migrations, statements.
        .target(name: "Storage", dependencies: ["CSQLite", "PostgreSQL", "Telemetry", "SystemCalls"], path: "Shared/Storage", swiftSettings: strictSettings),
        // Credentials: JWS/JWT signing and verification, JWKs, password hashing and policy.
        .target(
            name: "Credentials", dependencies: ["SystemCalls", crypto, cryptoExtras], path: "Shared/Credentials",
            swiftSettings: strictSettings),
        // Email: RFC 5322 messages, the mail-directory writer and the SMTP client.
        .target(name: "Mail", dependencies: ["SystemCalls"], path: "Shared/Mail", swiftSettings: strictSettings),
        // Every message type and method descriptor of API.md.
        .target(
            name: "Contracts", dependencies: ["JSON", "RPC"], path: "Shared/Contracts", exclude: ["README.md"],
            swiftSettings: strictSettings),
        // What every process shares: configuration, logging, health, Describe, signals.
        .target(
            name: "ServiceKit", dependencies: ["RPC", "RPCHTTP2", "Telemetry", "SystemCalls", "Contracts", "Credentials", log, argumentParser, crypto],
            path: "Shared/ServiceKit", swiftSettings: strictSettings),

        // The services: one executable each.
        .executableTarget(
            name: "auth-svc",
            dependencies: ["Telemetry", "ServiceKit", "Storage", "Credentials", "Contracts", "Mail", "RPC", "RPCHTTP2", log, argumentParser],
            path: "Services/auth-svc", exclude: ["README.md"], swiftSettings: strictSettings),

        .executableTarget(
            name: "catalog-svc",
            dependencies: ["Telemetry", "JSON", "ServiceKit", "Storage", "Credentials", "Contracts", "RPC", "RPCHTTP2", log, argumentParser, crypto],
            path: "Services/catalog-svc", exclude: ["README.md"],
            swiftSettings: strictSettings),
        .executableTarget(
            name: "basket-svc",
            dependencies: ["Telemetry", "JSON", "ServiceKit", "Storage", "PostgreSQL", "Contracts", "RPC", "RPCHTTP2", log, argumentParser],
            path: "Services/basket-svc", exclude: ["README.md"], swiftSettings: strictSettings),

        .executableTarget(
            name: "order-svc",
            dependencies: ["Telemetry", "JSON", "ServiceKit", "Storage", "Contracts", "RPC", "RPCHTTP2", log, argumentParser, crypto],
            path: "Services/order-svc", exclude: ["README.md"], swiftSettings: strictSettings),

        .executableTarget(
            name: "gateway",
            dependencies: ["Telemetry", "JSON", "ServiceKit", "Contracts", "RPC", "RPCHTTP2", "SystemCalls", log, argumentParser],
            path: "Services/gateway", exclude: ["README.md"], resources: [.copy("WebRoot")], swiftSettings: strictSettings),

        .testTarget(
            name: "GatewayTests",
            dependencies: ["InProcessServices", "JSON", "ServiceTestSupport", "Contracts", "RPC", "RPCHTTP2", "ServiceKit"],
            path: "Tests/GatewayTests", swiftSettings: strictSettings),
        .testTarget(
            name: "GatewayUnitTests", dependencies: ["Telemetry", "JSON", "gateway", "Contracts", "RPC", "RPCHTTP2", "SystemCalls", "ServiceKit", "ServiceTestSupport", log],
            path: "Tests/GatewayUnitTests", swiftSettings: strictSettings),

        // Contract tests (Tests/Contracts/README.md): the framework, its own tests and the API
        // snapshot check, the consumers against mock providers, the providers against the contracts
        // (replayed over StorefrontKit's Connect transport for a consumer that speaks Connect).
        .target(
            name: "ContractTesting", dependencies: ["JSON", "Contracts", "RPC", "RPCHTTP2", "Credentials", "StorefrontKit", log],
            path: "Tests/ContractTesting", swiftSettings: strictSettings),
        .testTarget(
            name: "ContractTestingTests", dependencies: ["JSON", "ContractTesting", "Contracts", "RPC", "RPCHTTP2"],
            path: "Tests/ContractTestingTests", swiftSettings: strictSettings),
        .testTarget(
            name: "ContractConsumerTests",
            dependencies: [
                "JSON", "ContractTesting", "ServiceTestSupport", "basket-svc", "order-svc", "catalog-svc", "gateway", "shopctl",
                "StorefrontKit", "Contracts", "RPC", "RPCHTTP2", "ServiceKit", "Credentials", "Storage", log, argumentParser,
            ],
            path: "Tests/ContractConsumerTests", swiftSettings: strictSettings),
        .testTarget(
            name: "ContractProviderTests",
            dependencies: [
                "JSON", "ContractTesting", "ServiceTestSupport", "auth-svc", "catalog-svc", "basket-svc", "order-svc", "gateway",
                "Contracts", "RPC", "RPCHTTP2", "ServiceKit", "Credentials", "Storage", log, crypto, cryptoExtras,
            ],
            path: "Tests/ContractProviderTests", swiftSettings: strictSettings),

        // The client library apps use (Clients/StorefrontKit/README.md): Connect over URLSession,
        // nothing an iOS app cannot ship (no RPCHTTP2, no ServiceKit, no C).
        .target(
            name: "StorefrontKit", dependencies: ["Contracts", "RPC", "JSON", crypto], path: "Clients/StorefrontKit",
            exclude: ["README.md"], swiftSettings: strictSettings),
        // The Linux command-line example: a whole shopper's journey through StorefrontKit
        // (Examples/ShopperJourney; run by Tests/StorefrontKitTests' ShopperJourneyLiveTests).
        .executableTarget(
            name: "shopper-journey", dependencies: ["StorefrontKit"], path: "Examples/ShopperJourney",
            swiftSettings: strictSettings),
        .testTarget(
            name: "StorefrontKitTests",
            dependencies: ["StorefrontKit", "ServiceTestSupport", "Contracts", "RPC", "JSON", "Credentials"],
            path: "Tests/StorefrontKitTests", swiftSettings: strictSettings),

        // The command line (Services/shopctl/README.md): every call through the gateway.
        .executableTarget(
            name: "shopctl", dependencies: ["JSON", "Contracts", "RPC", "RPCHTTP2", "SystemCalls", "Telemetry", argumentParser],
            path: "Services/shopctl", exclude: ["README.md"], swiftSettings: strictSettings),
        .testTarget(
            name: "ShopctlTests",
            dependencies: ["JSON", "shopctl", "ServiceTestSupport", "Contracts", "RPC", "RPCHTTP2", "Credentials", "Telemetry", log],
            path: "Tests/ShopctlTests", swiftSettings: strictSettings),

        // deploy/: the Kubernetes manifests and Dockerfile against the built executables, and
        // deploy/compose end to end.
        .testTarget(
            name: "DeployTests", dependencies: ["ServiceTestSupport", "Contracts", "RPC", "RPCHTTP2"], path: "Tests/DeployTests",
            swiftSettings: strictSettings),

        // End to end (issue 6, DESIGN.md "Testing"): deploy/compose starts the system from this
        // build's executables, and every user action is a real `shopctl` process.
        .testTarget(
            name: "EndToEndTests", dependencies: ["ServiceTestSupport", "Contracts", "RPC", "Credentials"],
            path: "Tests/EndToEndTests", swiftSettings: strictSettings),

        // Measurements only (see Benchmarks/README.md); not part of any service.
        .executableTarget(
            name: "bench-server", dependencies: ["ServiceKit"], path: "Benchmarks/BenchServer",
            swiftSettings: strictSettings),

        // What the service suites share: launching executables, their logs, accounts, expectations.
        .target(
            name: "ServiceTestSupport",
            dependencies: ["Telemetry", "JSON", "Contracts", "RPC", "RPCHTTP2", "Credentials", "ServiceKit", "PostgreSQL", crypto, cryptoExtras],
            path: "Tests/ServiceTestSupport", swiftSettings: strictSettings),
        // Services built inside the test process (`<Name>Server.make`) for the service suites
        // that do not need the wire (Tests/README.md).
        .target(
            name: "InProcessServices",
            dependencies: ["ServiceTestSupport", "auth-svc", "catalog-svc", "basket-svc", "order-svc", "gateway", "RPC", "ServiceKit", "Telemetry", log],
            path: "Tests/InProcessServices", swiftSettings: strictSettings),
        .testTarget(name: "JSONTests", dependencies: ["JSON", "RPC", "ServiceTestSupport"], path: "Tests/JSONTests", swiftSettings: strictSettings),
        .testTarget(name: "RPCTests", dependencies: ["RPC", "JSON", "ServiceTestSupport"], path: "Tests/RPCTests", swiftSettings: strictSettings),
        .testTarget(
            name: "RPCHTTP2Tests", dependencies: ["Telemetry", "JSON", "RPC", "RPCHTTP2", "SystemCalls", "Contracts", "ServiceKit", "ServiceTestSupport", log],
            path: "Tests/RPCHTTP2Tests", swiftSettings: strictSettings),
        .testTarget(
            name: "ServiceKitTests", dependencies: ["Telemetry", "ServiceKit", "RPC", "RPCHTTP2", "Contracts", "Credentials", "ServiceTestSupport", argumentParser],
            path: "Tests/ServiceKitTests", swiftSettings: strictSettings),
        .testTarget(
            name: "CredentialsTests", dependencies: ["Credentials", crypto, cryptoExtras], path: "Tests/CredentialsTests",
            swiftSettings: strictSettings),
        .testTarget(
            name: "ContractsTests", dependencies: ["JSON", "Contracts", "RPC"], path: "Tests/ContractsTests",
            swiftSettings: strictSettings),
        .testTarget(name: "MailTests", dependencies: ["Mail"], path: "Tests/MailTests", swiftSettings: strictSettings),
        .testTarget(
            name: "SystemCallsTests", dependencies: ["SystemCalls"], path: "Tests/SystemCallsTests", swiftSettings: strictSettings),
        .testTarget(name: "TelemetryTests", dependencies: ["Telemetry", "RPC", "ServiceTestSupport"], path: "Tests/TelemetryTests", swiftSettings: strictSettings),
        .testTarget(
            name: "AuthServiceTests",
            dependencies: ["InProcessServices", "ServiceTestSupport", "Contracts", "RPC", "RPCHTTP2", "Credentials", "ServiceKit", crypto, cryptoExtras],
            path: "Tests/AuthServiceTests", swiftSettings: strictSettings),
        .testTarget(
            name: "AuthServiceUnitTests",
            dependencies: [
                "JSON", "auth-svc", "Storage", "ServiceTestSupport", "Credentials", "Contracts", "Mail", "RPC", "ServiceKit", "Telemetry",
                crypto, cryptoExtras, log,
            ],
            path: "Tests/AuthServiceUnitTests", swiftSettings: strictSettings),
        .testTarget(
            name: "CatalogServiceTests",
            dependencies: ["InProcessServices", "JSON", "ServiceTestSupport", "Contracts", "RPC", "RPCHTTP2", "Credentials", "ServiceKit"],
            path: "Tests/CatalogServiceTests", swiftSettings: strictSettings),
        .testTarget(
            name: "CatalogServiceUnitTests", dependencies: ["JSON", "catalog-svc", "Storage", "ServiceTestSupport", "Contracts", "RPC", "ServiceKit"],
            path: "Tests/CatalogServiceUnitTests", swiftSettings: strictSettings),
        .testTarget(
            name: "BasketServiceTests",
            dependencies: [
                "InProcessServices", "JSON", "ServiceTestSupport", "Contracts", "RPC", "RPCHTTP2", "Credentials", "ServiceKit",
                "basket-svc", "Storage", "PostgreSQL", log,
            ],
            path: "Tests/BasketServiceTests", swiftSettings: strictSettings),
        .testTarget(
            name: "OrderServiceTests",
            dependencies: ["InProcessServices", "JSON", "ServiceTestSupport", "Contracts", "RPC", "RPCHTTP2", "Credentials", "ServiceKit"],
            path: "Tests/OrderServiceTests", swiftSettings: strictSettings),
        .testTarget(
            name: "OrderServiceUnitTests", dependencies: ["JSON", "order-svc", "Storage", "ServiceTestSupport", "Contracts", "Telemetry"],
            path: "Tests/OrderServiceUnitTests", swiftSettings: strictSettings),
        .testTarget(name: "StorageTests", dependencies: ["Storage", "Telemetry", "ServiceTestSupport", "RPCHTTP2", "SystemCalls"], path: "Tests/StorageTests", swiftSettings: strictSettings),
        .testTarget(name: "PostgreSQLTests", dependencies: ["PostgreSQL", "ServiceTestSupport"], path: "Tests/PostgreSQLTests", swiftSettings: strictSettings),
    ]
)
