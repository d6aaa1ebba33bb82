public import Contracts
public import Foundation

/// A signed-in session as a ``CredentialStore`` keeps it between launches: the tokens, when
/// the access token expires, and the user they belong to. Treat it as a secret.
public struct StoredSession: Codable, Sendable, Equatable, CustomStringConvertible {
    /// The JWT sent as `authorization: Bearer …`.
    public var accessToken: String
    /// The opaque, single-use token that buys the next session.
    public var refreshToken: String
    /// When the access token expires, by the device's clock.
    public var accessTokenExpiresAt: Date
    /// The signed-in user.
    public var user: User

    /// A stored session.
    public init(accessToken: String, refreshToken: String, accessTokenExpiresAt: Date, user: User) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.accessTokenExpiresAt = accessTokenExpiresAt
        self.user = user
    }

    /// The session `session` answered at `receivedAt`: its access token expires `expiresIn`
    /// seconds after that.
    init(_ session: Session, receivedAt: Date) {
        self.init(
            accessToken: session.accessToken, refreshToken: session.refreshToken,
            accessTokenExpiresAt: receivedAt.addingTimeInterval(TimeInterval(session.expiresIn)), user: session.user)
    }

    /// Whether the access token should be refreshed before use at `now`: expired, or within
    /// `margin` of it (a call must not arrive just after its token lapsed).
    func needsRefresh(at now: Date, margin: TimeInterval) -> Bool {
        accessTokenExpiresAt.timeIntervalSince(now) <= margin
    }

    /// Describes the session without its tokens.
    public var description: String {
        "StoredSession(user: \(user.id), accessTokenExpiresAt: \(accessTokenExpiresAt), tokens: <redacted>)"
    }

    /// The bytes a store writes: JSON.
    func encoded() throws -> Data { try JSONEncoder().encode(self) }

    /// A session read back from ``encoded()``'s bytes.
    static func decoded(from data: Data) throws -> StoredSession { try JSONDecoder().decode(StoredSession.self, from: data) }
}
