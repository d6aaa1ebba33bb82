import Foundation
internal import SystemCalls

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The key file: one JSON object `{"alg": "EdDSA", "kid": "…", "privateKey": "<base64url>"}`
/// holding the raw private key, written with mode 0600 (DESIGN.md "Security").
extension SigningKey {
    /// The JSON members of a key file.
    private struct FileContents: Codable {
        var alg: JWSAlgorithm
        var kid: String
        var privateKey: String
    }

    /// The largest key file `load(from:)` reads; real ones are about 100 bytes.
    private static let maximumFileSize = 64 * 1024

    /// Writes the key to `path` with mode 0600, replacing any file there atomically
    /// (``System/writeFileAtomically(_:to:mode:replacing:)``): the secret is never readable by
    /// others, not even briefly, and a reader sees the old key or the new one.
    package func save(to path: String) throws(KeyError) {
        let contents = FileContents(alg: algorithm, kid: kid, privateKey: Base64URL.encode(privateKeyBytes))
        guard let json = try? JSONEncoder().encode(contents) else { throw .invalidKeyMaterial }
        do throws(SystemError) {
            try System.writeFileAtomically(json, to: path, mode: 0o600)
        } catch {
            throw .fileSystem(operation: error.function, path: path, errno: error.errno)
        }
    }

    /// The key stored at `path` by `save(to:)`.
    package static func load(from path: String) throws(KeyError) -> SigningKey {
        let descriptor = try systemCall("open", path) { open(path, O_RDONLY | O_CLOEXEC) }
        defer { System.close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = try systemCall("read", path) {
                buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            }
            if count == 0 { break }
            bytes += buffer.prefix(count)
            guard bytes.count <= maximumFileSize else { throw .invalidKeyFile(path: path) }
        }
        guard let contents = try? JSONDecoder().decode(FileContents.self, from: Data(bytes)),
            !contents.kid.isEmpty,
            let privateKey = Base64URL.decode(contents.privateKey)
        else { throw .invalidKeyFile(path: path) }
        return try SigningKey(algorithm: contents.alg, privateKey: privateKey, kid: contents.kid)
    }

    /// Runs a system call through ``System/call(_:_:)``, turning its failure into
    /// `KeyError.fileSystem` for `path`.
    private static func systemCall<Result: FixedWidthInteger>(
        _ operation: String, _ path: String, _ call: () -> Result
    ) throws(KeyError) -> Result {
        do throws(SystemError) {
            return try System.call(operation, call)
        } catch {
            throw .fileSystem(operation: operation, path: path, errno: error.errno)
        }
    }
}
