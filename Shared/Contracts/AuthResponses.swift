public import RPC

/// Whether a `WatchAuthState` stream's session is signed in.
public enum AuthState: String, Codable, Sendable, CaseIterable {
    /// The session is valid.
    case signedIn = "SIGNED_IN"
    /// The session was revoked; the stream ends after this message.
    case signedOut = "SIGNED_OUT"
}

/// One message of the `WatchAuthState` stream: `{state, user?}`.
public struct WatchAuthStateResponse: RPCMessage, Hashable {
    /// The session's state.
    public var state: AuthState
    /// The user while signed in; absent once signed out.
    public var user: User?

    /// Creates a message.
    public init(state: AuthState, user: User? = nil) {
        self.state = state
        self.user = user
    }

    /// The JSON fields, for `Describe`.
    public static let fields = [FieldDescriptor("state", "String"), FieldDescriptor("user", "User", optional: true)]
}

/// `GetJwks` response: `{keys}`, the public keys that verify access tokens.
public struct GetJwksResponse: RPCMessage, Hashable {
    /// The keys, current and recently retired, told apart by `kid`.
    public var keys: [JWK]

    /// Creates a response.
    public init(keys: [JWK]) { self.keys = keys }

    /// The JSON fields, for `Describe`.
    public static let fields = [FieldDescriptor("keys", "[JWK]")]
}

/// A public JSON Web Key (RFC 7517 §4, RFC 7518 §6, RFC 8037 §2).
public struct JWK: RPCMessage, Hashable {
    /// The key type: "OKP" (Ed25519), "EC" (P-256) or "RSA".
    public var kty: String
    /// The key id, matched against the `kid` of a JWT header.
    public var kid: String
    /// The intended use, "sig" for signature keys.
    public var use: String?
    /// The algorithm the key is used with, e.g. "EdDSA" or "ES256".
    public var alg: String?
    /// The curve of an OKP or EC key, e.g. "Ed25519" or "P-256".
    public var crv: String?
    /// The x coordinate (EC) or public key (OKP), base64url.
    public var x: String?
    /// The y coordinate of an EC key, base64url.
    public var y: String?
    /// The modulus of an RSA key, base64url.
    public var n: String?
    /// The exponent of an RSA key, base64url.
    public var e: String?

    /// Creates a key.
    public init(
        kty: String, kid: String, use: String? = nil, alg: String? = nil, crv: String? = nil, x: String? = nil,
        y: String? = nil, n: String? = nil, e: String? = nil
    ) {
        self.kty = kty
        self.kid = kid
        self.use = use
        self.alg = alg
        self.crv = crv
        self.x = x
        self.y = y
        self.n = n
        self.e = e
    }

    /// The JSON fields, for `Describe`.
    public static let fields = [
        FieldDescriptor("kty", "String"),
        FieldDescriptor("kid", "String"),
        FieldDescriptor("use", "String", optional: true),
        FieldDescriptor("alg", "String", optional: true),
        FieldDescriptor("crv", "String", optional: true),
        FieldDescriptor("x", "String", optional: true),
        FieldDescriptor("y", "String", optional: true),
        FieldDescriptor("n", "String", optional: true),
        FieldDescriptor("e", "String", optional: true),
    ]
}
