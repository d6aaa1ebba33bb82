import Foundation
import SystemCalls
#if canImport(Glibc)
import Glibc
#endif

/// Files only the user may read: written atomically (a temporary file in the same directory,
/// fsync, rename, then the directory synced), mode 0600, in a directory of mode 0700 — so a
/// reader sees the old or the new contents, never half of either, and no other user sees them.
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

    /// Replaces the file at `url` with `data`, atomically and durably, mode 0600
    /// (``System/writeFileAtomically(_:to:mode:replacing:)``).
    static func write(_ data: Data, to url: URL) throws(ShopctlError) {
        try prepare(directory: url.deletingLastPathComponent())
        do throws(SystemError) {
            try System.writeFileAtomically(data, to: url.path, mode: 0o600)
        } catch {
            throw .local("Cannot write \(url.path): \(error.message).")
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
