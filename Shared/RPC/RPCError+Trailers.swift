internal import Foundation

/// How a status travels in trailers: `grpc-status`, percent-encoded `grpc-message`,
/// `shop-error-reason` and `shop-error-details-bin` (base64 of a JSON object).
extension RPCError {
    /// Trailer names.
    public enum Trailer {
        /// The numeric status.
        public static let status = "grpc-status"
        /// The percent-encoded message.
        public static let message = "grpc-message"
        /// The stable reason.
        public static let reason = "shop-error-reason"
        /// Base64 of the JSON details.
        public static let details = "shop-error-details-bin"
    }

    /// The trailers that carry this error.
    public var trailers: [(String, String)] {
        var fields: [(String, String)] = [(Trailer.status, String(code.rawValue))]
        if !message.isEmpty { fields.append((Trailer.message, PercentEncoding.encode(message))) }
        if let reason { fields.append((Trailer.reason, reason)) }
        if let details, let json = try? JSONCodec.shared.encode(details) {
            // gRPC `-bin` values are base64; peers accept it with or without padding.
            fields.append((Trailer.details, json.base64EncodedString()))
        }
        return fields
    }

    /// The trailers of a successful call.
    public static let okTrailers: [(String, String)] = [(Trailer.status, "0")]

    /// Reads a status from received trailers: `nil` for OK, an error otherwise.
    ///
    /// - Parameter httpStatus: the response's `:status`, used when `grpc-status` is missing.
    public static func fromTrailers(_ trailers: Metadata, httpStatus: Int) -> RPCError? {
        guard let statusText = trailers[Trailer.status] else {
            if httpStatus != 200 {
                return RPCError(
                    code: .forHTTPStatus(httpStatus), message: "HTTP status \(httpStatus) without grpc-status.")
            }
            return RPCError(code: .internal, message: "The response ended without grpc-status.")
        }
        guard let value = Int(statusText) else {
            return RPCError(code: .unknown, message: "Unparseable grpc-status '\(statusText)'.")
        }
        if value == 0 { return nil }
        let code = RPCCode(rawValue: value) ?? .unknown
        var details: JSONValue?
        if let encoded = trailers[Trailer.details], let data = Data(base64Encoded: Self.padded(encoded)) {
            details = try? JSONCodec.shared.decode(JSONValue.self, from: data)
        }
        return RPCError(
            code: code, reason: trailers[Trailer.reason],
            message: PercentEncoding.decode(trailers[Trailer.message] ?? ""), details: details)
    }

    private static func padded(_ base64: String) -> String {
        let remainder = base64.utf8.count % 4
        return remainder == 0 ? base64 : base64 + String(repeating: "=", count: 4 - remainder)
    }
}
