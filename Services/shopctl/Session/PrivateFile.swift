import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Files only the user may read: written atomically (a temporary file in the same directory,
/// fsync, rename), mode 0600, in a directory of mode 0700 — so a reader sees the old or the
/// new contents, never half of either, and no other user sees them at all.
enum PrivateFile {
    /// Creates `directory` and makes it 0700; missing parents are created 0700 too (as the XDG
    /// Base Directory spec asks), so a profile's `profiles/NAME/` never leaves `shopctl/` open.
    static func prepare(directory: URL) throws(ShopctlError) {
        let path = directory.path
        let parent = directory.deletingLastPathComponent()
        if parent.path != path, !FileManager.default.fileExists(atPath: parent.path) {
            try prepare(directory: parent)
        }
        if mkdir(path, 0o700) != 0 && errno != EEXIST {
            throw .local("Cannot create \(path): \(String(cString: strerror(errno))).")
        }
        guard chmod(path, 0o700) == 0 else {
            throw .local("Cannot set the mode of \(path): \(String(cString: strerror(errno))).")
        }
    }

    /// Replaces the file at `url` with `data`, atomically, mode 0600.
    static func write(_ data: Data, to url: URL) throws(ShopctlError) {
        try prepare(directory: url.deletingLastPathComponent())
        let temporary = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).\(getpid()).\(UInt32.random(in: .min ... .max)).tmp").path
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw .local("Cannot write \(temporary): \(String(cString: strerror(errno))).")
        }
        var failure: String?
        let written = data.withUnsafeBytes { bytes -> Int in
            var offset = 0
            while offset < bytes.count {
                let count = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if count < 0 {
                    if errno == EINTR { continue }
                    return -1
                }
                offset += count
            }
            return offset
        }
        if written != data.count || fchmod(descriptor, 0o600) != 0 || fsync(descriptor) != 0 {
            failure = String(cString: strerror(errno))
        }
        close(descriptor)
        if failure == nil && rename(temporary, url.path) != 0 { failure = String(cString: strerror(errno)) }
        if let failure {
            unlink(temporary)
            throw .local("Cannot write \(url.path): \(failure).")
        }
        // The rename is durable once the directory entry is.
        let directory = open(url.deletingLastPathComponent().path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directory >= 0 {
            fsync(directory)
            close(directory)
        }
    }

    /// The contents of `url`, or nil when there is no such file.
    static func read(_ url: URL) throws(ShopctlError) -> Data? {
        do {
            return try Data(contentsOf: url)
        } catch let error as CocoaError where error.code == .fileReadNoSuchFile {
            return nil
        } catch {
            if !FileManager.default.fileExists(atPath: url.path) { return nil }
            throw .local("Cannot read \(url.path): \(error.localizedDescription)")
        }
    }

    /// Removes the file at `url`; a missing file is fine.
    static func remove(_ url: URL) throws(ShopctlError) {
        if unlink(url.path) != 0 && errno != ENOENT {
            throw .local("Cannot remove \(url.path): \(String(cString: strerror(errno))).")
        }
    }
}
