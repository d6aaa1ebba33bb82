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
        do throws(SystemError) {
            try System.makeDirectory(path, mode: 0o700)
        } catch {
            throw .local("Cannot create \(path): \(error.message).")
        }
        do throws(SystemError) {
            _ = try System.call("chmod") { chmod(path, 0o700) }
        } catch {
            throw .local("Cannot set the mode of \(path): \(error.message).")
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
        do throws(SystemError) {
            _ = try System.call("unlink") { unlink(url.path) }
        } catch where error.errno == ENOENT {
            return
        } catch {
            throw .local("Cannot remove \(url.path): \(error.message).")
        }
    }
}
