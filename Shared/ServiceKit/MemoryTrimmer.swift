package import Logging
internal import RPCHTTP2

/// Gives memory the process has freed back to the system now and then, so a service's size
/// follows its load down as well as up.
///
/// glibc's `free` returns only the top of a heap: after a burst (thousands of large answers
/// buffered for slow clients, a big import) the freed memory below live blocks stays with the
/// process, and a service that once peaked at a gigabyte kept it. Every `interval` this looks
/// at what malloc holds free and, above `threshold`, trims (``System/trimMalloc()``). A trim
/// walks every arena under its lock, so it runs only when there is something worth returning.
package struct MemoryTrimmer: Sendable {
    /// How often to look.
    package var interval: Duration = .seconds(30)
    /// The free bytes above which a trim runs.
    package var threshold = 64 * 1024 * 1024

    package init() {}

    /// Trims when malloc holds more than ``threshold`` bytes free; returns the free bytes
    /// before and after, or nil when it did not trim.
    @discardableResult
    package func trimIfWorthIt() -> (before: Int, after: Int)? {
        let before = System.mallocFreeBytes
        guard before > threshold else { return nil }
        System.trimMalloc()
        return (before, System.mallocFreeBytes)
    }

    /// Looks every ``interval`` until cancelled; logs each trim at debug level.
    package func run(logger: Logger) async {
        while !Task.isCancelled {
            do { try await Task.sleep(for: interval) } catch { return }
            if let (before, after) = trimIfWorthIt() {
                logger.debug("returned freed memory to the system: malloc held \(before >> 20) MiB free, now \(after >> 20) MiB")
            }
        }
    }
}
