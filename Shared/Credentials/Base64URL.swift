package import Foundation

/// Base64url without padding (RFC 4648 §5, as JOSE uses it: RFC 7515 §2), strict on input.
///
/// Decoding rejects padding, whitespace, characters outside the alphabet, a length that no
/// byte string encodes to, and non-zero unused trailing bits, so that every byte string has
/// exactly one accepted text form. Stateless and thread-safe.
package enum Base64URL {
    /// The unpadded base64url text of `bytes`.
    package static func encode(_ bytes: some Sequence<UInt8>) -> String {
        Base64Alphabet.url.encode(Array(bytes))
    }

    /// The bytes `text` encodes, or nil when `text` is not canonical unpadded base64url.
    package static func decode(_ text: some StringProtocol) -> Data? {
        Base64Alphabet.url.decode(text).map { Data($0) }
    }
}

/// One of the two base64 alphabets of RFC 4648, always without padding: base64url for JOSE,
/// the standard alphabet for PHC strings.
struct Base64Alphabet: Sendable {
    /// `A–Z a–z 0–9 - _` (RFC 4648 §5).
    static let url = Base64Alphabet(last: (UInt8(ascii: "-"), UInt8(ascii: "_")))
    /// `A–Z a–z 0–9 + /` (RFC 4648 §4), as the PHC string format uses it without padding.
    static let standard = Base64Alphabet(last: (UInt8(ascii: "+"), UInt8(ascii: "/")))

    /// The 64 symbols, indexed by their 6-bit value.
    private let symbols: [UInt8]
    /// The 6-bit value of each ASCII byte, or 0xFF for bytes outside the alphabet.
    private let values: [UInt8]

    private init(last: (UInt8, UInt8)) {
        var symbols = Array(UInt8(ascii: "A")...UInt8(ascii: "Z"))
        symbols += Array(UInt8(ascii: "a")...UInt8(ascii: "z"))
        symbols += Array(UInt8(ascii: "0")...UInt8(ascii: "9"))
        symbols += [last.0, last.1]
        var values = [UInt8](repeating: 0xFF, count: 256)
        for (value, symbol) in symbols.enumerated() {
            values[Int(symbol)] = UInt8(value)
        }
        self.symbols = symbols
        self.values = values
    }

    /// The unpadded text of `bytes` in this alphabet.
    func encode(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count * 4 + 2) / 3)
        var index = 0
        while index + 3 <= bytes.count {
            let group = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            output += [symbol(group >> 18), symbol(group >> 12), symbol(group >> 6), symbol(group)]
            index += 3
        }
        switch bytes.count - index {
        case 1:
            let group = UInt32(bytes[index]) << 16
            output += [symbol(group >> 18), symbol(group >> 12)]
        case 2:
            let group = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8
            output += [symbol(group >> 18), symbol(group >> 12), symbol(group >> 6)]
        default:
            break
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The bytes of `text`, or nil unless it is canonical unpadded text in this alphabet.
    func decode(_ text: some StringProtocol) -> [UInt8]? {
        let input = Array(text.utf8)
        // 4n+1 symbols carry 6 bits too few for another byte: no byte string encodes to that.
        guard input.count % 4 != 1 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(input.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bitCount = 0
        for byte in input {
            let value = values[Int(byte)]
            guard value != 0xFF else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bitCount += 6
            if bitCount >= 8 {
                bitCount -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bitCount)))
                accumulator &= (1 << UInt32(bitCount)) - 1
            }
        }
        // Leftover bits must be zero (RFC 4648 §3.5), or two texts would decode to one value.
        guard accumulator == 0 else { return nil }
        return output
    }

    private func symbol(_ sextet: UInt32) -> UInt8 {
        symbols[Int(sextet & 0x3F)]
    }
}
