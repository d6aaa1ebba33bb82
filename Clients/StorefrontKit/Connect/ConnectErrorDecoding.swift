import Foundation
import JSON
import RPC

/// Reads the errors the gateway's Connect edge writes (API.md §9; the gateway's
/// `Web/ConnectError.swift` writes them) back into ``RPC/RPCError``: the code's name, the
/// message, and our reason and details from the `shop.v1.ErrorReason` detail — or, when a body
/// is not such JSON (a proxy's page), the code the HTTP status stands for.
enum ConnectErrorDecoding {
    /// The `type` of the detail carrying the reason and details.
    static let reasonDetailType = "shop.v1.ErrorReason"

    /// The error of a unary call answered with `httpStatus` and `body`; `reasonHeader` is the
    /// `shop-error-reason` response header, used when the body names no reason.
    static func unaryError(httpStatus: Int, body: Data, reasonHeader: String?) -> RPCError {
        let object = try? JSONCodec.shared.decode(JSONValue.self, from: body)
        var error = error(from: object, fallbackCode: RPCCode.forHTTPStatus(httpStatus))
        if error.reason == nil { error.reason = reasonHeader }
        if object?["code"] == nil, error.message.isEmpty {
            error.message = "HTTP status \(httpStatus) without a Connect error."
        }
        return error
    }

    /// The error of a call the server redirected (a 3xx `httpStatus`, to `location`). The
    /// client follows no redirect — `URLSession` would send the POST again as a GET without its
    /// body, and perhaps the bearer token to another host — so the call fails: `UNKNOWN`, as
    /// gRPC maps a 3xx, and not retried, for a redirect is where the base URL points, not a
    /// passing failure.
    static func redirectError(httpStatus: Int, location: String?) -> RPCError {
        let target = location.map { " to \($0)" } ?? ""
        return RPCError(
            code: .unknown,
            message: "The server redirected the call (HTTP status \(httpStatus)\(target)); calls are not redirected: check the base URL.")
    }

    /// The status carried by an end-of-stream message: nil for success (`{}`), else the error,
    /// its reason also read from the trailing metadata.
    static func endOfStreamStatus(_ payload: Data) -> RPCError? {
        guard let object = try? JSONCodec.shared.decode(JSONValue.self, from: payload) else {
            return RPCError(code: .internal, message: "The end-of-stream message is not JSON.")
        }
        guard let errorObject = object["error"], errorObject != .null else { return nil }
        var error = error(from: errorObject, fallbackCode: .unknown)
        if error.reason == nil {
            error.reason = object["metadata"]?[RPCError.Trailer.reason]?.arrayValue?.first?.stringValue
        }
        return error
    }

    /// The error a Connect error object describes; `fallbackCode` when it names no known code.
    static func error(from object: JSONValue?, fallbackCode: RPCCode) -> RPCError {
        let code = object?["code"]?.stringValue.flatMap(RPCCode.init(connectName:)) ?? fallbackCode
        var error = RPCError(code: code, message: object?["message"]?.stringValue ?? "")
        if let fields = reasonFields(in: object?["details"]?.arrayValue ?? []) {
            error.reason = fields["reason"]?.stringValue
            error.details = details(from: fields)
        }
        return error
    }

    /// The members of our reason detail: its `debug` object, or the JSON that `value` (unpadded
    /// base64) holds when a proxy dropped `debug`.
    private static func reasonFields(in details: [JSONValue]) -> [String: JSONValue]? {
        guard let detail = details.first(where: { $0["type"]?.stringValue == reasonDetailType }) else { return nil }
        if case .object(let members)? = detail["debug"] { return members }
        guard let value = detail["value"]?.stringValue, let bytes = Data(base64Encoded: padded(value)),
            case .object(let members)? = try? JSONCodec.shared.decode(JSONValue.self, from: bytes)
        else { return nil }
        return members
    }

    /// The error's details as the service gave them: the detail's members but the reason, or
    /// the lone `details` member a service's non-object details were wrapped in; nil when none.
    private static func details(from fields: [String: JSONValue]) -> JSONValue? {
        var members = fields
        members["reason"] = nil
        if members.count == 1, let wrapped = members["details"], wrapped.objectValue == nil { return wrapped }
        return members.isEmpty ? nil : .object(members)
    }

    /// `base64` with the `=` padding Foundation's decoder needs.
    private static func padded(_ base64: String) -> String {
        let remainder = base64.utf8.count % 4
        return remainder == 0 ? base64 : base64 + String(repeating: "=", count: 4 - remainder)
    }
}

extension JSONValue {
    /// The members, when this is an object.
    fileprivate var objectValue: [String: JSONValue]? {
        if case .object(let members) = self { return members }
        return nil
    }
}
