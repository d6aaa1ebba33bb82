internal import RPC
internal import SystemCalls

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
