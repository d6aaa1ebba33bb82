// swift-tools-version:6.1
// Reference server for Benchmarks/run: grpc-swift 2 (NIO HTTP/2 posix transport, plaintext)
// answering bench.v1.BenchService/Echo with a JSON codec. Not part of the main package and
// not built by CI; Benchmarks/run builds it in release mode on demand.
import PackageDescription

let package = Package(
  name: "reference-grpc-swift",
  platforms: [.macOS(.v15)],
  dependencies: [
    .package(url: "https://github.com/grpc/grpc-swift-2.git", exact: "2.4.3"),
    .package(url: "https://github.com/grpc/grpc-swift-nio-transport.git", exact: "2.9.2"),
  ],
  targets: [
    .executableTarget(
      name: "reference-grpc-swift",
      dependencies: [
        .product(name: "GRPCCore", package: "grpc-swift-2"),
        .product(name: "GRPCNIOTransportHTTP2Posix", package: "grpc-swift-nio-transport"),
      ],
      path: "Sources/ReferenceGRPCSwift"
    )
  ]
)
