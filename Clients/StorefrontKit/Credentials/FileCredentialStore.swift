public import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A ``CredentialStore`` in one file that only its owner can read (mode 0600, in a directory
/// made 0700 when missing): the store for Linux and command-line tools. Each save writes a new
/// file and renames it over the old one, so a crash leaves the old session or the new one,
/// never half of either; the new file is created 0600, so the tokens are never readable by
/// others, not even for a moment (a write-then-chmod would leave that moment).
///
/// Thread-safe: every save is a separate file renamed into place; the last rename wins.
public struct FileCredentialStore: CredentialStore {
    /// The file holding the session.
    public let file: URL

    /// A store keeping the session in `file`.
    public init(file: URL) {
        self.file = file
    }

    /// The stored session; nil when the file does not exist.
    public func load() throws -> StoredSession? {
        guard FileManager.default.fileExists(atPath: file.path) else { return nil }
        return try StoredSession.decoded(from: try Data(contentsOf: file))
    }

    /// Writes `session` to a new 0600 file beside ``file`` and renames it into place.
    public func save(_ session: StoredSession) throws {
        let directory = file.deletingLastPathComponent()
        if !FileManager.default.fileExists(atPath: directory.path) {
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        let temporary = directory.appendingPathComponent(".\(file.lastPathComponent).\(UUID().uuidString)")
        do {
            try Self.writeNew(temporary.path, bytes: try session.encoded())
            try Self.check(rename(temporary.path, file.path), "rename", temporary.path)
        } catch {
            unlink(temporary.path)
            throw error
        }
        // The rename is durable only once the directory is: else a crash can bring back the
        // old session, whose refresh token the server has rotated out (a reuse that signs out).
        try Self.syncDirectory(directory.path)
    }

    /// Flushes `path`, a directory, to disk.
    private static func syncDirectory(_ path: String) throws {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure("open", path) }
        defer { close(descriptor) }
        try check(fsync(descriptor), "fsync", path)
    }

    /// Deletes the file; nothing happens when it does not exist.
    public func remove() throws {
        guard unlink(file.path) == 0 || errno == ENOENT else { throw Self.failure("unlink", file.path) }
    }

    /// Creates `path` (which must not exist) with mode 0600 and writes `bytes` to disk.
    private static func writeNew(_ path: String, bytes: Data) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw failure("open", path) }
        defer { close(descriptor) }
        try bytes.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) in
            var offset = 0
            while offset < buffer.count {
                let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { throw failure("write", path) }
                offset += written
            }
        }
        try check(fsync(descriptor), "fsync", path)
    }

    /// Throws when a system call returned -1.
    private static func check(_ result: Int32, _ call: String, _ path: String) throws {
        if result != 0 { throw failure(call, path) }
    }

    /// The error of the system call `call` on `path` that just failed.
    private static func failure(_ call: String, _ path: String) -> any Error {
        let code = errno
        return CocoaError(.fileWriteUnknown, userInfo: [
            NSFilePathErrorKey: path,
            NSLocalizedDescriptionKey: "\(call) \(path): \(String(cString: strerror(code)))",
            NSUnderlyingErrorKey: NSError(domain: NSPOSIXErrorDomain, code: Int(code)),
        ])
    }
}
