internal import Credentials
internal import Foundation
internal import SystemCalls

/// A secret a service needs (an API key): from the environment when set there, else from a
/// file in the data directory, generated there on first start with mode 0600 (DESIGN.md
/// "Security"). Secrets never come from flags, which the process list shows.
package enum ServiceSecret {
    /// The value of `environmentName` without surrounding whitespace (a key written to a file
    /// or a Kubernetes Secret often ends in a newline), nil when unset or blank.
    package static func fromEnvironment(
        _ environmentName: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> String? {
        guard let value = environment[environmentName]?.trimmingCharacters(in: .whitespacesAndNewlines), !value.isEmpty
        else { return nil }
        return value
    }

    /// The value of `environmentName` when set and not blank (``fromEnvironment(_:environment:)``);
    /// else the contents of `path`, which is created with a new random 256-bit hex secret when
    /// missing: written whole and synced before it appears (mode 0600), and never over a file
    /// another process created meanwhile (that start fails instead, as two secrets would).
    package static func resolve(
        environmentName: String, path: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(StartupError) -> String {
        if let value = fromEnvironment(environmentName, environment: environment) { return value }
        if let existing = try? String(contentsOfFile: path, encoding: .utf8) {
            let value = existing.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !value.isEmpty else { throw StartupError("cannot use the secret file \(path): the file is empty") }
            return value
        }
        var generator = SystemRandomNumberGenerator()
        let value = OpaqueToken.randomBytes(count: 32, using: &generator).map { byte in
            String(byte, radix: 16).count == 1 ? "0" + String(byte, radix: 16) : String(byte, radix: 16)
        }.joined()
        do throws(SystemError) {
            try System.writeFileAtomically(value.utf8, to: path, mode: 0o600, replacing: false)
        } catch where error.errno == EEXIST {
            // Another process started at the same moment wrote its secret first; the link put
            // it in place whole, so it is read, and both use the same one.
            if let existing = try? String(contentsOfFile: path, encoding: .utf8),
                case let value = existing.trimmingCharacters(in: .whitespacesAndNewlines), !value.isEmpty
            {
                return value
            }
            throw StartupError("cannot use the secret file \(path): \(error.message)")
        } catch {
            throw StartupError("cannot use the secret file \(path): \(error.message)")
        }
        return value
    }

    /// The internal API key the services and the gateway share: `SHOP_INTERNAL_API_KEY`, else
    /// `<dataDirectory>/internal-api-key`, generated there on first start
    /// (``resolve(environmentName:path:environment:)``).
    package static func internalKey(
        dataDirectory: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(StartupError) -> String {
        try resolve(
            environmentName: "SHOP_INTERNAL_API_KEY", path: "\(dataDirectory)/internal-api-key", environment: environment)
    }
}
