public import RPC

// Requests that carry a password or a token describe themselves with the secret redacted, so
// that logging a request (`"\(request)"`) never writes a credential to a log.

/// `SignUp` request: `{email, password, displayName?}`.
public struct SignUpRequest: RPCMessage, Hashable, CustomStringConvertible {
    /// The email address to register.
    public var email: String
    /// The new account's password.
    public var password: String
    /// The name to show, if any.
    public var displayName: String?

    /// Creates a request.
    public init(email: String, password: String, displayName: String? = nil) {
        self.email = email
        self.password = password
        self.displayName = displayName
    }

    /// Describes the request without the password.
    public var description: String { "SignUpRequest(email: \(email), password: <redacted>)" }

    /// The JSON fields, for `Describe`.
    public static let fields = [
        FieldDescriptor("email", "String"), FieldDescriptor("password", "String"),
        FieldDescriptor("displayName", "String", optional: true),
    ]
}

/// `VerifyEmail` request: `{token}` from a verification link.
public struct VerifyEmailRequest: RPCMessage, Hashable, CustomStringConvertible {
    /// The single-use verification token.
    public var token: String

    /// Creates a request.
    public init(token: String) { self.token = token }

    /// Describes the request without the token.
    public var description: String { "VerifyEmailRequest(token: <redacted>)" }

    /// The JSON fields, for `Describe`.
    public static let fields = [FieldDescriptor("token", "String")]
}

/// `{email}`: the request of `ResendVerification`.
public struct ResendVerificationRequest: RPCMessage, Hashable {
    /// The address to send a new verification email to.
    public var email: String

    /// Creates a request.
    public init(email: String) { self.email = email }

    /// The JSON fields, for `Describe`.
    public static let fields = [FieldDescriptor("email", "String")]
}

/// `SignIn` request: `{email, password}`.
public struct SignInRequest: RPCMessage, Hashable, CustomStringConvertible {
    /// The account's email address.
    public var email: String
    /// The account's password.
    public var password: String

    /// Creates a request.
    public init(email: String, password: String) {
        self.email = email
        self.password = password
    }

    /// Describes the request without the password.
    public var description: String { "SignInRequest(email: \(email), password: <redacted>)" }

    /// The JSON fields, for `Describe`.
    public static let fields = [FieldDescriptor("email", "String"), FieldDescriptor("password", "String")]
}

/// An identity provider whose ID tokens `SignInWithIdToken` names: any string, so that a
/// provider this build does not know is answered `UNSUPPORTED_PROVIDER` rather than as a
/// malformed message; the four API.md names are constants.
public struct IdentityProvider: RawRepresentable, Codable, Hashable, Sendable, CaseIterable {
    /// The provider's name as sent on the wire, e.g. "google".
    public var rawValue: String

    /// The provider named `rawValue`.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Sign in with Google.
    public static let google = IdentityProvider(rawValue: "google")
    /// Sign in with Apple.
    public static let apple = IdentityProvider(rawValue: "apple")
    /// Kakao: named by the contract, answered with `UNSUPPORTED_PROVIDER`.
    public static let kakao = IdentityProvider(rawValue: "kakao")
    /// Naver: named by the contract, answered with `UNSUPPORTED_PROVIDER`.
    public static let naver = IdentityProvider(rawValue: "naver")

    /// The providers API.md names.
    public static let allCases: [IdentityProvider] = [.google, .apple, .kakao, .naver]
}

/// `SignInWithIdToken` request: `{provider, idToken, rawNonce?}`.
public struct SignInWithIdTokenRequest: RPCMessage, Hashable, CustomStringConvertible {
    /// The provider that issued the ID token.
    public var provider: IdentityProvider
    /// The provider's ID token (a JWT).
    public var idToken: String
    /// The nonce whose SHA-256 hex the token carries (Apple), if one was used.
    public var rawNonce: String?

    /// Creates a request.
    public init(provider: IdentityProvider, idToken: String, rawNonce: String? = nil) {
        self.provider = provider
        self.idToken = idToken
        self.rawNonce = rawNonce
    }

    /// Describes the request without the token and nonce.
    public var description: String { "SignInWithIdTokenRequest(provider: \(provider.rawValue), idToken: <redacted>)" }

    /// The JSON fields, for `Describe`.
    public static let fields = [
        FieldDescriptor("provider", "String"), FieldDescriptor("idToken", "String"),
        FieldDescriptor("rawNonce", "String", optional: true),
    ]
}

/// `RefreshSession` request: `{refreshToken}`.
public struct RefreshSessionRequest: RPCMessage, Hashable, CustomStringConvertible {
    /// The current refresh token; it is rotated by the call.
    public var refreshToken: String

    /// Creates a request.
    public init(refreshToken: String) { self.refreshToken = refreshToken }

    /// Describes the request without the token.
    public var description: String { "RefreshSessionRequest(refreshToken: <redacted>)" }

    /// The JSON fields, for `Describe`.
    public static let fields = [FieldDescriptor("refreshToken", "String")]
}

/// Which sessions `SignOut` ends.
public enum SignOutScope: String, Codable, Sendable, CaseIterable {
    /// Only the session of the calling access token.
    case local
    /// Every session of the user, on every device.
    case global
}

/// `SignOut` request: `{scope?}`, `local` when absent.
public struct SignOutRequest: RPCMessage, Hashable {
    /// The sessions to end.
    public var scope: SignOutScope

    /// Creates a request.
    public init(scope: SignOutScope = .local) { self.scope = scope }

    /// Decodes a request, taking `local` for an absent scope.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        scope = try container.decodeIfPresent(SignOutScope.self, forKey: .scope) ?? .local
    }

    /// The JSON fields, for `Describe`.
    public static let fields = [FieldDescriptor("scope", "String", optional: true)]
}

/// `{email}`: the request of `RequestPasswordReset`.
public struct RequestPasswordResetRequest: RPCMessage, Hashable {
    /// The address to send a reset link to.
    public var email: String

    /// Creates a request.
    public init(email: String) { self.email = email }

    /// The JSON fields, for `Describe`.
    public static let fields = [FieldDescriptor("email", "String")]
}
