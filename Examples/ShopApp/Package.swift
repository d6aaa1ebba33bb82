// swift-tools-version: 6.1
import PackageDescription

// A SwiftUI shop on StorefrontKit (README.md). It depends on the Storefront package two folders
// up, by path, as an app in this repository would; open this folder in Xcode and run the
// ShopApp scheme (macOS), or add its sources to an iOS app target.
let package = Package(
    name: "ShopApp",
    platforms: [.iOS(.v16), .macOS(.v13)],
    dependencies: [
        .package(name: "Storefront", path: "../.."),
    ],
    targets: [
        .executableTarget(
            name: "ShopApp", dependencies: [.product(name: "StorefrontKit", package: "Storefront")], path: "Sources/ShopApp",
            swiftSettings: [.swiftLanguageMode(.v6)]),
    ]
)
