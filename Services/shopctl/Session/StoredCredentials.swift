import Contracts

/// What `credentials.json` holds: the session's tokens and who they belong to.
struct StoredCredentials: Codable, Sendable, Equatable {
    /// The JWT sent as `authorization: Bearer`.
    var accessToken: String
    /// The single-use token that `RefreshSession` exchanges for a new session.
    var refreshToken: String
    /// The user id (`sub` of the access token).
    var userId: String
    /// The user's email address when the session was made.
    var email: String

    /// Credentials with every member given.
    init(accessToken: String, refreshToken: String, userId: String, email: String) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.userId = userId
        self.email = email
    }

    /// The credentials of a session that a sign-in or refresh answered.
    init(_ session: Session) {
        self.init(
            accessToken: session.accessToken, refreshToken: session.refreshToken, userId: session.user.id,
            email: session.user.email)
    }
}
