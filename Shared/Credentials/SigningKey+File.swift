import Foundation

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

    /// Writes the key to `path` with mode 0600, replacing any file there atomically.
    ///
    /// The bytes go to a new temporary file in the same directory, created 0600 with
    /// `O_EXCL | O_NOFOLLOW` so the secret is never readable by others, not even briefly; it is
    /// synced and then renamed over `path`.
    package func save(to path: String) throws(KeyError) {
        let contents = FileContents(alg: algorithm, kid: kid, privateKey: Base64URL.encode(privateKeyBytes))
        guard let json = try? JSONEncoder().encode(contents) else { throw .invalidKeyMaterial }
        var generator = SystemRandomNumberGenerator()
        let temporaryPath = path + ".tmp-" + Hex.encode(OpaqueToken.randomBytes(count: 6, using: &generator))
        let descriptor = try Self.systemCall("open", temporaryPath) {
            open(temporaryPath, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        }
        do throws(KeyError) {
            // open(2) applies the umask; fchmod makes the mode exactly 0600 whatever it was.
            _ = try Self.systemCall("fchmod", temporaryPath) { fchmod(descriptor, 0o600) }
            var written = 0
            let bytes = Array(json)
            while written < bytes.count {
                let count = try Self.systemCall("write", temporaryPath) {
                    bytes.withUnsafeBytes { buffer in
                        write(descriptor, buffer.baseAddress.map { $0 + written }, bytes.count - written)
                    }
                }
                written += count
            }
            _ = try Self.systemCall("fsync", temporaryPath) { fsync(descriptor) }
            _ = close(descriptor)
            _ = try Self.systemCall("rename", path) { rename(temporaryPath, path) }
        } catch {
            _ = close(descriptor)
            _ = unlink(temporaryPath)
            throw error
        }
    }

    /// The key stored at `path` by `save(to:)`.
    package static func load(from path: String) throws(KeyError) -> SigningKey {
        let descriptor = try systemCall("open", path) { open(path, O_RDONLY | O_CLOEXEC) }
        defer { _ = close(descriptor) }
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

    /// Runs a system call that returns -1 and sets `errno` on failure, retrying on EINTR and
    /// turning any other failure into `KeyError.fileSystem`.
    private static func systemCall<Result: BinaryInteger>(
        _ operation: String, _ path: String, _ call: () -> Result
    ) throws(KeyError) -> Result {
        while true {
            let result = call()
            if result >= 0 { return result }
            let error = errno
            if error != EINTR {
                throw .fileSystem(operation: operation, path: path, errno: error)
            }
        }
    }
}
