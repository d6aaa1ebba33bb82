package import Foundation

/// Scratch space and secrets for a test's services.
package enum TestScratch {
    /// A fresh, not yet created path `<temporary directory>/<prefix>-<UUID>`.
    package static func directoryURL(prefix: String) -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
    }

    /// Creates and returns a fresh directory `<temporary directory>/<prefix>-<UUID>`; the
    /// caller removes it.
    package static func makeDirectory(prefix: String) throws -> URL {
        let directory = directoryURL(prefix: prefix)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// 32 random bytes in hex: an API key nobody else knows.
    package static func randomKey() -> String {
        (0..<32).map { _ in String(format: "%02x", UInt8.random(in: .min ... .max)) }.joined()
    }
}
