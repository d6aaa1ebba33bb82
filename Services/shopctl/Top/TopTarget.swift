import RPC

/// A process `shopctl top` watches: a name for its rows and the address whose `/metrics` it
/// reads.
struct TopTarget: Sendable, Equatable {
    /// What the rows call it: `gateway`, `catalog`…
    let name: String
    /// Where its `/metrics` is served.
    let address: SocketAddressText

    /// What `deploy/compose` starts on 127.0.0.1, one instance of each (README, "top").
    static let composeDefaults = [
        ("gateway", 8080), ("auth", 7001), ("catalog", 7002), ("basket", 7003), ("order", 7004),
    ].map { TopTarget(name: $0.0, address: SocketAddressText(host: "127.0.0.1", port: $0.1)) }

    /// A target with this name and address.
    init(name: String, address: SocketAddressText) {
        self.name = name
        self.address = address
    }

    /// Parses `--target`'s `name=host:port`; nil when it is not that shape or the port is 0.
    init?(argument: String) {
        guard let equals = argument.firstIndex(of: "="), equals != argument.startIndex,
            let address = SocketAddressText(String(argument[argument.index(after: equals)...])), address.port > 0
        else { return nil }
        self.init(name: String(argument[..<equals]), address: address)
    }
}
