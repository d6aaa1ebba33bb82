/// How a code is named by the Connect protocol (connectrpc.com/docs/protocol, "Error Codes"):
/// the gRPC name in lower case, except `canceled` with one l. The gateway's web edge writes
/// these names and StorefrontKit reads them.
extension RPCCode {
    /// The Connect name of the code, e.g. `not_found`.
    public var connectName: String {
        self == .cancelled ? "canceled" : name.lowercased()
    }

    /// Parses a Connect code name such as `not_found`; nil for a name Connect does not define.
    public init?(connectName: String) {
        guard let code = Self.all.first(where: { $0.connectName == connectName }) else { return nil }
        self = code
    }
}
