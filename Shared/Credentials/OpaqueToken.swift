import Crypto

/// Random bearer secrets — refresh tokens, email-verification and password-reset tokens — and
/// the digest under which a store keeps them.
///
/// A token is 32 bytes (256 bits) from the system's cryptographically secure generator, as
/// 43 base64url characters. Only `hash(_:)` of it is stored, so a leaked database does not
/// hand out working tokens; lookups go by that hash, which is why no salt is used (the token
/// itself carries 256 bits of entropy). Stateless and thread-safe.
package enum OpaqueToken {
    /// The number of random bytes in a token.
    package static let byteCount = 32

    /// A fresh random token as unpadded base64url, never starting with `-`.
    package static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        return generate(using: &generator)
    }

    /// A token from `generator`'s bytes. People paste verification and reset tokens into
    /// commands (`shopctl auth verify TOKEN`), where a leading `-` reads as an option (one token
    /// in 64 would): a first byte that would encode as `-` is drawn again, which leaves the first
    /// character uniform over the other 63 and the token ~255.98 bits of entropy.
    package static func generate(using generator: inout some RandomNumberGenerator) -> String {
        var bytes = randomBytes(count: byteCount, using: &generator)
        while bytes[0] >> 2 == 62 {  // the first 6 bits; value 62 encodes as "-" in base64url
            bytes[0] = UInt8.random(in: .min ... .max, using: &generator)
        }
        return Base64URL.encode(bytes)
    }

    /// The lowercase hex SHA-256 of the token's UTF-8 bytes: what a store keeps and looks up.
    package static func hash(_ token: String) -> String {
        Hex.encode(SHA256.hash(data: Array(token.utf8)))
    }

    /// `count` bytes drawn from `generator`.
    package static func randomBytes(count: Int, using generator: inout some RandomNumberGenerator) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }
}

/// Comparisons whose running time does not depend on where two secrets first differ, for API
/// keys, password hashes and nonces. Stateless and thread-safe.
package enum ConstantTime {
    /// Whether two strings have equal UTF-8 bytes, in time independent of their contents and
    /// lengths: both are hashed with SHA-256 first and the digests compared byte by byte.
    package static func equals(_ lhs: String, _ rhs: String) -> Bool {
        let left = Array(SHA256.hash(data: Array(lhs.utf8)))
        let right = Array(SHA256.hash(data: Array(rhs.utf8)))
        return equals(left, right)
    }

    /// Whether two byte strings are equal, in time that depends only on their lengths (which
    /// are public for the fixed-size digests this is used on).
    package static func equals(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for index in lhs.indices {
            difference |= lhs[index] ^ rhs[index]
        }
        return difference == 0
    }
}

/// Lowercase hexadecimal text of bytes, as stored token hashes and Apple nonces use it.
enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// The lowercase hex text of `bytes`, two digits per byte.
    static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var output: [UInt8] = []
        for byte in bytes {
            output.append(digits[Int(byte >> 4)])
            output.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: output, as: UTF8.self)
    }
}
