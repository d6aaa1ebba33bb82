import Crypto
import Foundation

/// The nonce of Sign in with Apple: the app gives Apple ``hashed`` (hex SHA-256 of the raw
/// nonce) in `ASAuthorizationAppleIDRequest.nonce`, Apple puts it in the ID token, and the app
/// gives the server ``raw`` with the token (``StorefrontAuth/signInWithApple(idToken:rawNonce:)``):
/// the server checks `nonce == hex(SHA256(raw))`, so a token stolen on its way is useless
/// without the raw nonce, which never left the app.
///
/// ```swift
/// let nonce = AppleSignInNonce()
/// request.nonce = nonce.hashed
/// // … in the authorization delegate:
/// try await client.auth.signInWithApple(idToken: idToken, rawNonce: nonce.raw)
/// ```
public struct AppleSignInNonce: Sendable, Hashable {
    /// The raw nonce, kept by the app and sent to the server.
    public let raw: String

    /// A new random nonce of `length` characters from a 64-character alphabet (6 bits each:
    /// 32 characters carry 192 bits).
    public init(length: Int = 32) {
        var generator = SystemRandomNumberGenerator()
        raw = String((0..<max(length, 16)).map { _ in Self.alphabet.randomElement(using: &generator)! })
    }

    /// The nonce `raw` (one the app made otherwise).
    public init(raw: String) {
        self.raw = raw
    }

    /// What Apple is given: the lowercase hex SHA-256 of ``raw``'s UTF-8 bytes.
    public var hashed: String {
        SHA256.hash(data: Data(raw.utf8)).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }

    private static let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_")
}
