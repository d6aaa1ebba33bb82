public import RPC

/// An account as auth-svc shows it to its owner (API.md §2).
public struct User: RPCMessage, Hashable {
    /// The user id, also the `sub` claim of access tokens.
    public var id: String
    /// The account's email address.
    public var email: String
    /// Whether the email address has been verified.
    public var emailVerified: Bool
    /// The name to show, if the user gave one.
    public var displayName: String?
    /// How the user can sign in: "password", "google" and/or "apple".
    public var providers: [String]
    /// When the account was created, as an RFC 3339 timestamp.
    public var createdAt: String

    /// Creates a user.
    public init(
        id: String, email: String, emailVerified: Bool, displayName: String? = nil, providers: [String],
        createdAt: String
    ) {
        self.id = id
        self.email = email
        self.emailVerified = emailVerified
        self.displayName = displayName
        self.providers = providers
        self.createdAt = createdAt
    }

    /// The JSON fields, for `Describe`.
    public static let fields = [
        FieldDescriptor("id", "String"),
        FieldDescriptor("email", "String"),
        FieldDescriptor("emailVerified", "Bool"),
        FieldDescriptor("displayName", "String", optional: true),
        FieldDescriptor("providers", "[String]"),
        FieldDescriptor("createdAt", "String"),
    ]
}

/// A signed-in session: the answer of every sign-in method (API.md §2).
public struct Session: RPCMessage, Hashable, CustomStringConvertible {
    /// The JWT to send as `authorization: Bearer <accessToken>`.
    public var accessToken: String
    /// The opaque token that `RefreshSession` exchanges for a new session; single use.
    public var refreshToken: String
    /// Always "Bearer".
    public var tokenType: String
    /// Seconds until the access token expires.
    public var expiresIn: Int
    /// The signed-in user.
    public var user: User

    /// Creates a session.
    public init(accessToken: String, refreshToken: String, tokenType: String = "Bearer", expiresIn: Int, user: User) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.tokenType = tokenType
        self.expiresIn = expiresIn
        self.user = user
    }

    /// Describes the session without its tokens, so that logging it leaks nothing.
    public var description: String {
        "Session(accessToken: <redacted>, refreshToken: <redacted>, expiresIn: \(expiresIn), user: \(user.id))"
    }

    /// The JSON fields, for `Describe`.
    public static let fields = [
        FieldDescriptor("accessToken", "String"),
        FieldDescriptor("refreshToken", "String"),
        FieldDescriptor("tokenType", "String"),
        FieldDescriptor("expiresIn", "Int"),
        FieldDescriptor("user", "User"),
    ]
}

/// `{user}`: the answer of SignUp, VerifyEmail, GetCurrentUser and UpdateProfile.
public struct UserResponse: RPCMessage, Hashable {
    /// The user.
    public var user: User

    /// Creates a response.
    public init(user: User) { self.user = user }

    /// The JSON fields, for `Describe`.
    public static let fields = [FieldDescriptor("user", "User")]
}
