#if canImport(Glibc)
package import Glibc
#endif

extension System {
    /// Replaces the file at `path` with `bytes`, atomically and durably, with exactly `mode`.
    ///
    /// The bytes go to a new hidden temporary file in the same directory (so the rename stays
    /// on one file system), created with `O_EXCL | O_NOFOLLOW` and `mode`, then `fchmod`ed to
    /// `mode` (open(2) applies the umask); they are written in full, synced, and the file is
    /// renamed over `path`; last the directory is synced, which makes the rename survive a
    /// crash. A reader sees the old contents or the new, never part of either, and a secret
    /// file is never readable by others, not even briefly. On a failure before the rename the
    /// temporary file is removed and `path` is untouched; a failure to sync the directory
    /// after it is thrown with the new file already in place.
    ///
    /// With `replacing` false an existing file at `path` is kept and the call fails with
    /// `EEXIST` (the temporary file is linked into place, which no other writer can race).
    package static func writeFileAtomically(
        _ bytes: some Collection<UInt8>, to path: String, mode: mode_t = 0o600, replacing: Bool = true
    ) throws(SystemError) {
        let (directory, name) = split(path)
        var generator = SystemRandomNumberGenerator()
        let temporary = "\(directory)/.\(name).\(String(generator.next() as UInt64, radix: 36)).tmp"
        // Only a temporary file this call created is removed on failure: an `open` refused
        // EEXIST met another writer's file of the same name.
        try writeSynced(Array(bytes), to: temporary, mode: mode)
        do throws(SystemError) {
            if replacing {
                _ = try call("rename") { rename(temporary, path) }
            } else {
                _ = try call("link") { link(temporary, path) }
                _ = unlink(temporary)
            }
        } catch {
            _ = unlink(temporary)
            throw error
        }
        try syncDirectory(directory)
    }

    /// Creates `path` (which must not exist) with exactly `mode`, writes `bytes` and syncs them;
    /// removes it again when anything after its creation fails.
    private static func writeSynced(_ bytes: [UInt8], to path: String, mode: mode_t) throws(SystemError) {
        let fd = try call("open") { open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode) }
        defer { close(fd) }
        do throws(SystemError) {
            _ = try call("fchmod") { fchmod(fd, mode) }
            // Array's closure-taking methods rethrow untyped errors; a Result keeps the type.
            try bytes.withUnsafeBytes { buffer in Result { () throws(SystemError) in try writeAll(fd, buffer) } }.get()
            _ = try call("fsync") { fsync(fd) }
        } catch {
            _ = unlink(path)
            throw error
        }
    }

    /// Syncs a directory's entries, so a rename or link in it survives a crash.
    package static func syncDirectory(_ path: String) throws(SystemError) {
        let fd = try call("open") { open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        defer { close(fd) }
        _ = try call("fsync") { fsync(fd) }
    }

    /// Creates the directory `path` and any missing parents with `mode` (less the umask, as
    /// mkdir(2) applies it); an existing directory is kept as it is — also one that another
    /// thread or process creates meanwhile, since several deliveries may ask at once.
    package static func makeDirectory(_ path: String, mode: mode_t) throws(SystemError) {
        var path = path
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        do throws(SystemError) {
            try makeOneDirectory(path, mode: mode)
        } catch where error.errno == ENOENT {
            let parent = split(path).directory
            guard parent != path else { throw error }
            try makeDirectory(parent, mode: mode)
            try makeOneDirectory(path, mode: mode)
        }
    }

    /// mkdir(2) of `path`, where an existing entry counts as done.
    private static func makeOneDirectory(_ path: String, mode: mode_t) throws(SystemError) {
        do throws(SystemError) {
            _ = try call("mkdir") { mkdir(path, mode) }
        } catch where error.errno == EEXIST {
            return
        }
    }

    /// The directory of `path` (`.` for a bare name) and its last component.
    static func split(_ path: String) -> (directory: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let directory = String(path[..<slash])
        return (directory.isEmpty ? "/" : directory, String(path[path.index(after: slash)...]))
    }
}
