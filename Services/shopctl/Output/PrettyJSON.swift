import Foundation
import RPC
import JSON

/// JSON laid out for people: two-space indentation, keys sorted, whole numbers without a
/// fraction. For `shopctl call` without `--json`, like grpcurl's output.
enum PrettyJSON {
    /// `data` laid out; the bytes as text when they are not JSON.
    static func format(_ data: Data) -> String {
        guard let value = try? JSONCodec.shared.decode(JSONValue.self, from: data) else {
            return String(decoding: data, as: UTF8.self)
        }
        return format(value)
    }

    /// `value` laid out, starting at `depth` levels of indentation.
    static func format(_ value: JSONValue, depth: Int = 0) -> String {
        let indent = String(repeating: "  ", count: depth + 1)
        let closing = String(repeating: "  ", count: depth)
        switch value {
        case .null: return "null"
        case .bool(let flag): return flag ? "true" : "false"
        case .number(let number):
            if number.rounded() == number, abs(number) < 9.0e15 { return String(Int64(number)) }
            return "\(number)"
        case .string(let text): return quote(text)
        case .array(let items):
            if items.isEmpty { return "[]" }
            let inner = items.map { indent + format($0, depth: depth + 1) }
            return "[\n" + inner.joined(separator: ",\n") + "\n" + closing + "]"
        case .object(let members):
            if members.isEmpty { return "{}" }
            let inner = members.keys.sorted().map { key in
                indent + quote(key) + ": " + format(members[key] ?? .null, depth: depth + 1)
            }
            return "{\n" + inner.joined(separator: ",\n") + "\n" + closing + "}"
        }
    }

    /// `text` as a JSON string literal.
    static func quote(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result + "\""
    }
}
