internal import SystemCalls

/// A `host:port` pair as written in flags (`127.0.0.1:7002`, `[::1]:7002`, `localhost:7002`).
public struct SocketAddressText: Sendable, Hashable, CustomStringConvertible {
    /// Host name or literal address.
    public let host: String
    /// TCP port.
    public let port: Int

    /// Creates an address.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `host:port`; `nil` when it is malformed.
    public init?(_ text: String) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
            (0...65535).contains(port)
        else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { return nil }
        self.init(host: host, port: port)
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

extension Socket {
    /// Resolves `address` (``Socket/resolve(host:port:passive:numericOnly:)``).
    static func resolve(
        _ address: SocketAddressText, passive: Bool, numericOnly: Bool = false
    ) throws(SystemError) -> [ResolvedAddress] {
        try resolve(host: address.host, port: address.port, passive: passive, numericOnly: numericOnly)
    }

    /// Opens a non-blocking listening socket on `address` (``Socket/listen(host:port:backlog:)``).
    static func listen(on address: SocketAddressText, backlog: Int32 = 1024) throws(SystemError) -> (fd: Int32, port: Int) {
        try listen(host: address.host, port: address.port, backlog: backlog)
    }
}
