import Foundation
import RPC

/// The base64 of gRPC-Web's text mode (`application/grpc-web-text`).
///
/// Requests: the spec lets a client send separately padded chunks one after another, so
/// padding may end any group of four characters, not only the last; whitespace is skipped and
/// both the standard and the URL-safe alphabets are read.
///
/// Responses: stock clients decode what has arrived in whole groups of four characters (the
/// official grpc-web client does), or the whole body at once (`atob`, most other decoders),
/// which fails on padding in the middle. So the answer is one padding-free base64 text up to
/// its final frame: a streamed message is sent as soon as it is written, so it cannot wait
/// for the next one to fill its last group — instead its JSON gets trailing spaces (still the
/// same JSON) until the frame's length is a multiple of three, and its base64 has no padding.
enum GRPCWebText {
    /// Decodes a text-mode request body.
    ///
    /// - Throws: `INVALID_ARGUMENT`/`MALFORMED_MESSAGE` for a character outside base64, a
    ///   misplaced `=`, or a lone last character.
    static func decode(_ text: Data) throws(RPCError) -> Data {
        var output = Data(capacity: text.count / 4 * 3 + 3)
        var group: [UInt8] = []
        group.reserveCapacity(4)
        var padding = 0
        for byte in text {
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"), UInt8(ascii: "\n"):
                continue
            case UInt8(ascii: "="):
                // Only the third and fourth characters of a group may be padding.
                guard group.count + padding >= 2 else { throw malformed }
                padding += 1
            default:
                guard padding == 0, let value = value(of: byte) else { throw malformed }
                group.append(value)
            }
            if group.count + padding == 4 {
                append(group, to: &output)
                group.removeAll(keepingCapacity: true)
                padding = 0
            }
        }
        // An unpadded last group: two or three characters make one or two bytes.
        guard padding == 0, group.count != 1 else { throw malformed }
        append(group, to: &output)
        return output
    }

    /// Encodes a whole answer (a unary call's frames), padded at its end only.
    static func encode(_ bytes: Data) -> Data {
        bytes.base64EncodedData()
    }

    /// The base64 of one streamed message's frame with no padding: the message gets up to two
    /// trailing spaces so that the frame's length is a multiple of three.
    static func encodeStreamed(_ message: Data) -> Data {
        let spaces = (3 - (MessageFraming.prefixSize + message.count) % 3) % 3
        var padded = message
        padded.append(contentsOf: repeatElement(UInt8(ascii: " "), count: spaces))
        return ConnectEnvelope.frame(padded).base64EncodedData()
    }

    private static func append(_ group: [UInt8], to output: inout Data) {
        guard group.count >= 2 else { return }
        output.append(group[0] << 2 | group[1] >> 4)
        if group.count >= 3 { output.append(group[1] << 4 | group[2] >> 2) }
        if group.count == 4 { output.append(group[2] << 6 | group[3]) }
    }

    /// The six-bit value of a base64 character of either alphabet.
    private static func value(of byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): byte - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): byte - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"), UInt8(ascii: "-"): 62
        case UInt8(ascii: "/"), UInt8(ascii: "_"): 63
        default: nil
        }
    }

    private static let malformed = RPCError(
        code: .invalidArgument, reason: "MALFORMED_MESSAGE", message: "The request body is not valid base64.")
}
