/// TCP ports of 127.0.0.1 nobody listens on, chosen by the kernel.
package enum FreePorts {
    /// `count` distinct ports that were free a moment ago: each bound at once (so the kernel
    /// gives different ones), then released.
    package static func take(_ count: Int) throws -> [Int] {
        let sockets = try (0..<count).map { _ in try ListeningSocket() }
        return sockets.map(\.port)
    }
}
