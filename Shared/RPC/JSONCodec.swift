public import Foundation
import JSON

/// Encodes and decodes messages as JSON, turning decoding failures into
/// `INVALID_ARGUMENT`/`MALFORMED_MESSAGE` with a field violation that names the bad field.
///
/// Uses our own coders (the `JSON` module's `JSONEncoder` and `JSONDecoder`), which cost less per call than
/// Foundation's (Benchmarks/HISTORY.md, 2026-11-22); output has sorted keys and unescaped
/// slashes, as Foundation's would with
/// `[.sortedKeys, .withoutEscapingSlashes]`. Thread-safe: it has no state.
public struct JSONCodec: Sendable {
    /// The shared codec; it has no per-call state.
    public static let shared = JSONCodec()

    /// Creates a codec; keys are written sorted so output is stable.
    public init() {}

    /// Encodes a message. Encoding our own types only fails on a programming error (a
    /// non-finite Double), which reaches the client as `INTERNAL`.
    public func encode<Message: Encodable>(_ message: Message) throws(RPCError) -> Data {
        do {
            return try JSON.JSONEncoder.encode(message)
        } catch {
            throw RPCError.internalError(cause: error)
        }
    }

    /// Decodes a message; bad JSON or a wrong field type is `MALFORMED_MESSAGE`.
    public func decode<Message: Decodable>(_ type: Message.Type, from data: Data) throws(RPCError) -> Message {
        do {
            return try JSON.JSONDecoder.decode(type, from: data)
        } catch let error as DecodingError {
            throw Self.malformed(error)
        } catch {
            throw RPCError(code: .invalidArgument, reason: "MALFORMED_MESSAGE", message: "The message is not valid JSON.", cause: error)
        }
    }

    /// Describes a decoding failure in terms of the field a client got wrong.
    static func malformed(_ error: DecodingError) -> RPCError {
        let (path, problem): ([any CodingKey], String)
        switch error {
        case .typeMismatch(let type, let context):
            (path, problem) = (context.codingPath, "expected \(describe(type))")
        case .valueNotFound(let type, let context):
            (path, problem) = (context.codingPath, "expected \(describe(type)), found null")
        case .keyNotFound(let key, let context):
            (path, problem) = (context.codingPath + [key], "is required")
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                return RPCError(
                    code: .invalidArgument, reason: "MALFORMED_MESSAGE",
                    message: "The message is not a valid JSON object.", cause: error)
            }
            (path, problem) = (context.codingPath, describeCorruption(context.debugDescription))
        @unknown default:
            (path, problem) = ([], "is invalid")
        }
        let field = path.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }
            .joined(separator: ".").replacingOccurrences(of: ".[", with: "[")
        var rpcError = RPCError.invalidField(field.isEmpty ? "(message)" : field, problem, reason: "MALFORMED_MESSAGE")
        rpcError.cause = error
        return rpcError
    }

    /// A value the field's type does not accept, in the client's terms: an enum's unknown case
    /// (Swift says "Cannot initialize ProductSort from invalid String value NOPE", naming our
    /// type) becomes "'NOPE' is not an allowed value".
    private static func describeCorruption(_ description: String) -> String {
        guard description.hasPrefix("Cannot initialize "), let range = description.range(of: " value ") else {
            return description
        }
        return "'\(description[range.upperBound...])' is not an allowed value"
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Bool.Type: return "a boolean"
        case is any FixedWidthInteger.Type: return "an integer"
        case is any BinaryFloatingPoint.Type: return "a number"
        default:
            let name = String(describing: type)
            if name.hasPrefix("Array") { return "an array" }
            if name.hasPrefix("Dictionary") { return "an object" }
            return "an object"
        }
    }
}
