import Foundation
import SystemCalls
#if canImport(Glibc)
import Glibc
#endif

/// An exclusive `flock(2)` on a file, held from ``acquire(_:timeout:)`` until ``release()``.
///
/// `flock` locks belong to an open file description, so two acquisitions conflict whether they
/// come from two processes or from two tasks of one process (each opens the file anew). The
/// kernel drops the lock when the process dies, so a crashed holder never blocks anyone.
/// Waiting polls with `LOCK_NB` and sleeps between tries: no thread blocks, and the wait is
/// cancellable and bounded.
struct FileLock: Sendable {
    private let descriptor: Int32

    private init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// Takes the lock on `url` (creating the file, mode 0600), waiting at most `timeout`.
    static func acquire(_ url: URL, timeout: Duration) async throws -> FileLock {
        try PrivateFile.prepare(directory: url.deletingLastPathComponent())
        let descriptor: Int32
        do {
            descriptor = try System.call("open") { open(url.path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600) }
        } catch {
            throw ShopctlError.local("Cannot open \(url.path): \(error.message).")
        }
        let deadline = ContinuousClock.now + timeout
        var pause = Duration.milliseconds(5)
        while try !tryLock(descriptor, url: url) {
            guard ContinuousClock.now < deadline else {
                System.close(descriptor)
                throw ShopctlError.local(
                    "Another shopctl has held \(url.path) for too long.",
                    hint: "if no other shopctl is running, try again")
            }
            do {
                try await Task.sleep(for: pause)
            } catch {
                System.close(descriptor)
                throw error
            }
            pause = min(pause * 2, .milliseconds(50))
        }
        return FileLock(descriptor: descriptor)
    }

    /// One try at the lock (EINTR retried by ``System/call``): whether it was taken; false
    /// while another holds it. Any other failure closes `descriptor` and is thrown.
    private static func tryLock(_ descriptor: Int32, url: URL) throws(ShopctlError) -> Bool {
        do {
            return try System.nonBlocking("flock") { flock(descriptor, LOCK_EX | LOCK_NB) } != nil
        } catch {
            System.close(descriptor)
            throw .local("Cannot lock \(url.path): \(error.message).")
        }
    }

    /// Gives the lock up and closes the file.
    func release() {
        _ = flock(descriptor, LOCK_UN)
        System.close(descriptor)
    }

    /// Runs `body` holding the lock on `url`, releasing it however `body` ends.
    static func withLock<Result>(
        _ url: URL, timeout: Duration, _ body: () async throws -> Result
    ) async throws -> Result {
        let lock = try await acquire(url, timeout: timeout)
        defer { lock.release() }
        return try await body()
    }
}
