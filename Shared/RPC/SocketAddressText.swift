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
