internal import Credentials
internal import Crypto
internal import Foundation

/// Opaque, tamper-proof page tokens (API.md §2 `pageToken`/`nextPageToken`): a cursor — the
/// position after a page's last item — encoded as JSON, bound to the list's `scope` (its
/// filters and, for per-user lists, the user) and signed with HMAC-SHA256.
///
/// A token that was altered, minted by another key, or presented with another scope decodes
/// to nil, which services answer with their `INVALID_PAGE_TOKEN`. Immutable; thread-safe.
package struct PageTokens: Sendable {
    private let key: SymmetricKey

    /// Tokens signed with `secret` (e.g. a `ServiceSecret` from the data directory, so tokens
    /// survive a restart).
    package init(secret: String) {
        key = SymmetricKey(data: SHA256.hash(data: Data(secret.utf8)))
    }

    /// The token for `cursor` within `scope`.
    package func encode<Cursor: Encodable>(_ cursor: Cursor, scope: String) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        // Encoding a cursor of plain numbers and strings cannot fail.
        let payload = (try? encoder.encode(cursor)) ?? Data("{}".utf8)
        return Base64URL.encode(payload) + "." + Base64URL.encode(signature(payload, scope: scope))
    }

    /// The cursor of `token` within `scope`, or nil when the token is not one this key made
    /// for this scope.
    package func decode<Cursor: Decodable>(_ token: String, as type: Cursor.Type, scope: String) -> Cursor? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard token.utf8.count <= 4096, parts.count == 2, let payload = Base64URL.decode(parts[0]),
            let presented = Base64URL.decode(parts[1]),
            ConstantTime.equals(Array(presented), Array(signature(payload, scope: scope)))
        else { return nil }
        return try? JSONDecoder().decode(Cursor.self, from: payload)
    }

    private func signature(_ payload: Data, scope: String) -> Data {
        var message = Data(scope.utf8)
        message.append(0)
        message.append(payload)
        return Data(HMAC<SHA256>.authenticationCode(for: message, using: key)).prefix(16)
    }
}
