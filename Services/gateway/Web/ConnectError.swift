import Foundation
import RPC
import JSON

/// How an ``RPC/RPCError`` reaches a Connect client (connectrpc.com/docs/protocol, "Error
/// Codes" and "Error and EndStreamResponse"): the code's name and HTTP status, the JSON error
/// object, and the end-of-stream message of a stream.
///
/// Our stable reason travels as one detail, `{"type": "shop.v1.ErrorReason", "value": …,
/// "debug": {"reason": "ALREADY_IN_BASKET", …}}`: `value` is the unpadded base64 of the JSON
/// bytes of `debug` (Connect's `value` is a serialized message; we have no protobuf, so the
/// message is the JSON itself), and `debug` holds the reason beside the fields of
/// ``RPC/RPCError/details`` — what the gRPC path sends as `shop-error-reason` and
/// `shop-error-details-bin`.
enum ConnectError {
    /// The `type` of the detail carrying the reason and details.
    static let reasonDetailType = "shop.v1.ErrorReason"
    /// The most bytes of a detail's JSON; larger details are left out (the reason stays), as
    /// the gRPC path leaves out `shop-error-details-bin` past its limit.
    static let maximumDetailBytes = RPCError.maximumTrailerDetailsBytes

    /// The Connect name of `code` (``RPC/RPCCode/connectName``).
    static func name(of code: RPCCode) -> String { code.connectName }

    /// The HTTP status a unary error of `code` is answered with (the spec's table).
    static func httpStatus(of code: RPCCode) -> Int {
        switch code {
        case .cancelled: 499
        case .invalidArgument, .failedPrecondition, .outOfRange: 400
        case .deadlineExceeded: 504
        case .notFound: 404
        case .alreadyExists, .aborted: 409
        case .permissionDenied: 403
        case .resourceExhausted: 429
        case .unimplemented: 501
        case .unavailable: 503
        case .unauthenticated: 401
        default: 500  // unknown, internal, data_loss
        }
    }

    /// The JSON error object: `code`, `message` when there is one, `details` when there is a
    /// reason or details.
    static func object(_ error: RPCError) -> JSONValue {
        var members: [String: JSONValue] = ["code": .string(name(of: error.code))]
        if !error.message.isEmpty { members["message"] = .string(error.message) }
        if let detail = reasonDetail(error) { members["details"] = .array([detail]) }
        return .object(members)
    }

    /// The body of a unary error response.
    static func body(_ error: RPCError) -> Data {
        encode(object(error))
    }

    /// The end-of-stream message: `{}` after success, else the error and the reason as
    /// trailing metadata.
    static func endOfStream(_ error: RPCError?) -> Data {
        guard let error else { return Data("{}".utf8) }
        var members: [String: JSONValue] = ["error": object(error)]
        if let reason = error.reason {
            members["metadata"] = .object([RPCError.Trailer.reason: .array([.string(reason)])])
        }
        return encode(.object(members))
    }

    /// The detail carrying `error`'s reason and details; nil when it has neither.
    static func reasonDetail(_ error: RPCError) -> JSONValue? {
        var fields: [String: JSONValue] = [:]
        switch error.details {
        case .object(let members)?: fields = members
        case let other?: fields["details"] = other
        case nil: break
        }
        if let reason = error.reason { fields["reason"] = .string(reason) }
        guard !fields.isEmpty else { return nil }
        var debug = JSONValue.object(fields)
        var bytes = encode(debug)
        if bytes.count > maximumDetailBytes {
            guard let reason = error.reason else { return nil }
            debug = .object(["reason": .string(reason)])
            bytes = encode(debug)
        }
        return .object(["type": .string(reasonDetailType), "value": .string(unpaddedBase64(bytes)), "debug": debug])
    }

    /// Standard base64 without `=` padding, as Connect's examples write detail values.
    static func unpaddedBase64(_ bytes: Data) -> String {
        var text = bytes.base64EncodedString()
        while text.utf8.last == UInt8(ascii: "=") { text.removeLast() }
        return text
    }

    /// Encodes a JSON value; ours are strings, arrays and objects, which always encode.
    private static func encode(_ value: JSONValue) -> Data {
        (try? JSONCodec.shared.encode(value)) ?? Data(#"{"code":"internal"}"#.utf8)
    }
}
