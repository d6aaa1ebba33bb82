internal import Foundation
import JSON

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

    /// The most UTF-8 bytes of a message sent in `grpc-message` (3 KiB at most once
    /// percent-encoded); a longer one is cut there and ends in "…".
    public static let maximumTrailerMessageBytes = 1024
    /// The most bytes of `shop-error-details-bin` (base64); larger details are left out.
    public static let maximumTrailerDetailsBytes = 8 * 1024

    /// The trailers that carry this error.
    ///
    /// A message or details can echo what the caller sent (a bad value, quoted): cut to the
    /// limits above, the trailers stay far below the 16 KiB header list peers accept. Past
    /// 64 KiB nghttp2 would not send them at all, and the call would hang.
    public var trailers: [(String, String)] {
        var fields: [(String, String)] = [(Trailer.status, String(code.rawValue))]
        if !message.isEmpty {
            fields.append((Trailer.message, PercentEncoding.encode(Self.cut(message, toBytes: Self.maximumTrailerMessageBytes))))
        }
        if let reason { fields.append((Trailer.reason, reason)) }
        if let details, let json = try? JSONCodec.shared.encode(details) {
            // gRPC `-bin` values are base64; peers accept it with or without padding.
            let encoded = json.base64EncodedString()
            if encoded.utf8.count <= Self.maximumTrailerDetailsBytes { fields.append((Trailer.details, encoded)) }
        }
        return fields
    }

    /// `text` if it has at most `limit` UTF-8 bytes, else its longest prefix of whole
    /// characters that leaves room for "…", followed by "…".
    static func cut(_ text: String, toBytes limit: Int) -> String {
        guard text.utf8.count > limit else { return text }
        var bytes = 0
        var end = text.startIndex
        for index in text.indices {
            let next = text.index(after: index)
            let size = text.utf8.distance(from: index, to: next)
            if bytes + size > limit - 3 { break }  // "…" is 3 bytes
            bytes += size
            end = next
        }
        return text[..<end] + "…"
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
