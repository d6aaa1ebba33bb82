/// Percent-encoding of `grpc-message`: bytes outside printable ASCII and `%` itself are
/// written as `%XX` of their UTF-8 bytes, and so is a space that starts or ends the text (an
/// HTTP/2 field value must not, RFC 9113 §8.2.1: nghttp2 refuses such trailers and resets the
/// stream).
/// https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md#responses
public enum PercentEncoding {
    private static let hex: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// Encodes a message for the `grpc-message` trailer.
    public static func encode(_ text: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        let last = text.utf8.count - 1
        for (index, byte) in text.utf8.enumerated() {
            let edgeSpace = byte == 0x20 && (index == 0 || index == last)
            if byte >= 0x20 && byte <= 0x7E && byte != 0x25 && !edgeSpace {
                out.append(byte)
            } else {
                out.append(0x25)
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0x0F)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes a `grpc-message`; malformed escapes are kept as they are, as the spec asks.
    public static func decode(_ text: String) -> String {
        let bytes = Array(text.utf8)
        guard bytes.contains(0x25) else { return text }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == 0x25, index + 2 < bytes.count,
                let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2])
            {
                out.append(high << 4 | low)
                index += 3
            } else {
                out.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: return byte - 0x30
        case 0x41...0x46: return byte - 0x41 + 10
        case 0x61...0x66: return byte - 0x61 + 10
        default: return nil
        }
    }
}
