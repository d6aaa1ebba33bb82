public import RPC
public import RPCHTTP2

// Start-up: where ServiceKit chooses the transport that carries a service's calls to another.

extension ClientConfiguration {
    /// How Storefront's processes call each other: the defaults, plus keepalive PINGs every
    /// 30 s while calls wait on a quiet connection, so an upstream that hangs (a stopped VM, a
    /// dropped route) is given up after 10 s more instead of at each call's deadline. Our
    /// servers accept pings at any rate; third-party gRPC servers may not, so plain clients
    /// keep keepalive off.
    public static var upstream: ClientConfiguration {
        var configuration = ClientConfiguration()
        configuration.keepaliveInterval = .seconds(30)
        configuration.keepaliveTimeout = .seconds(10)
        return configuration
    }
}

extension RPCClient {
    /// A client of another Storefront process at `address`: HTTP/2 with the
    /// ``ClientConfiguration/upstream`` settings, on an event loop of its own.
    public static func upstream(_ address: SocketAddressText) throws -> RPCClient {
        try RPCClient(target: address, configuration: .upstream)
    }
}
