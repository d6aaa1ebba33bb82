/// Where an upstream service is: one `host:port`, or its replicas — several, comma-separated
/// (`10.0.0.5:7002,10.0.0.6:7002`), or a name that resolves to several addresses (a Kubernetes
/// headless Service's, one per pod).
public struct UpstreamTarget: Sendable, Hashable, CustomStringConvertible {
    /// The addresses as given, at least one.
    public let addresses: [SocketAddressText]

    /// The target of one address.
    public init(_ address: SocketAddressText) {
        addresses = [address]
    }

    /// The target of one `host` and `port`.
    public init(host: String, port: Int) {
        self.init(SocketAddressText(host: host, port: port))
    }

    /// Parses `host:port[,host:port…]` (spaces around the commas allowed); nil when it is
    /// empty or an entry is malformed.
    public init?(_ text: String) {
        let entries = text.split(separator: ",", omittingEmptySubsequences: false).map {
            $0.trimmingPrefix(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed()
        }
        var addresses: [SocketAddressText] = []
        for entry in entries {
            guard let address = SocketAddressText(String(entry)) else { return nil }
            addresses.append(address)
        }
        guard !addresses.isEmpty else { return nil }
        self.addresses = addresses
    }

    /// The addresses, comma-separated.
    public var description: String { addresses.map(\.description).joined(separator: ",") }

    /// The one address when the target is a single literal IP address: it needs neither
    /// lookups nor balancing. nil for several addresses or a name.
    public var singleLiteralAddress: SocketAddressText? {
        guard addresses.count == 1, let address = addresses.first else { return nil }
        let host = address.host
        let isIPv4 = host.split(separator: ".", omittingEmptySubsequences: false).count == 4
            && host.allSatisfy { $0.isASCII && ($0.isNumber || $0 == ".") }
        let isIPv6 = host.contains(":") && host.allSatisfy { $0.isASCII && ($0.isHexDigit || $0 == ":" || $0 == ".") }
        return isIPv4 || isIPv6 ? address : nil
    }
}
