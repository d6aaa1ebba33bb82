/// The refusals of a request's own headers, in one wording for every protocol that carries a
/// call (gRPC, gRPC-Web, Connect): the client's value is quoted through ``ClientInput``.
extension RPCError {
    /// No method is registered at `path`.
    public static func unknownMethod(_ path: String) -> RPCError {
        RPCError(code: .unimplemented, reason: "UNKNOWN_METHOD", message: "Method not found: '\(ClientInput.quoted(path))'.")
    }

    /// A content coding other than identity, named by `header`.
    public static func unsupportedEncoding(_ encoding: String, header: String = "grpc-encoding") -> RPCError {
        RPCError(
            code: .unimplemented, reason: "UNSUPPORTED_ENCODING",
            message: "\(header) '\(ClientInput.quoted(encoding))' is not supported; use identity.")
    }

    /// A timeout header that does not parse; `hint` says what would.
    public static func malformedTimeout(_ value: String, header: String = "grpc-timeout", hint: String = "") -> RPCError {
        RPCError(
            code: .invalidArgument, reason: "INVALID_TIMEOUT", message: "Malformed \(header) '\(ClientInput.quoted(value))'\(hint).")
    }
}

extension GRPCTimeout {
    /// The duration of a `grpc-timeout` header, nil when there is none.
    ///
    /// - Throws: `INVALID_ARGUMENT`/`INVALID_TIMEOUT` when it does not parse.
    public static func parseHeader(_ text: String?) throws(RPCError) -> Duration? {
        guard let text else { return nil }
        guard let duration = parse(text) else { throw RPCError.malformedTimeout(text) }
        return duration
    }
}
