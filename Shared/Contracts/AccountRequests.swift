public import RPC

/// `ResetPassword` request: `{token, newPassword}` from a reset link.
public struct ResetPasswordRequest: RPCMessage, Hashable, CustomStringConvertible {
    /// The single-use reset token.
    public var token: String
    /// The password to set.
    public var newPassword: String

    /// Creates a request.
    public init(token: String, newPassword: String) {
        self.token = token
        self.newPassword = newPassword
    }

    /// Describes the request without its secrets.
    public var description: String { "ResetPasswordRequest(token: <redacted>, newPassword: <redacted>)" }

    /// The JSON fields, for `Describe`.
    public static let fields = [FieldDescriptor("token", "String"), FieldDescriptor("newPassword", "String")]
}

/// `ChangePassword` request: `{currentPassword, newPassword}`.
public struct ChangePasswordRequest: RPCMessage, Hashable, CustomStringConvertible {
    /// The password the user has now.
    public var currentPassword: String
    /// The password to set.
    public var newPassword: String

    /// Creates a request.
    public init(currentPassword: String, newPassword: String) {
        self.currentPassword = currentPassword
        self.newPassword = newPassword
    }

    /// Describes the request without its secrets.
    public var description: String { "ChangePasswordRequest(currentPassword: <redacted>, newPassword: <redacted>)" }

    /// The JSON fields, for `Describe`.
    public static let fields = [
        FieldDescriptor("currentPassword", "String"), FieldDescriptor("newPassword", "String"),
    ]
}

/// `UpdateProfile` request: `{displayName}`.
public struct UpdateProfileRequest: RPCMessage, Hashable {
    /// The new display name.
    public var displayName: String

    /// Creates a request.
    public init(displayName: String) { self.displayName = displayName }

    /// The JSON fields, for `Describe`.
    public static let fields = [FieldDescriptor("displayName", "String")]
}

/// `DeleteAccount` request: `{password?}`; password users must give their password.
public struct DeleteAccountRequest: RPCMessage, Hashable, CustomStringConvertible {
    /// The account's password; absent for users who only sign in with an ID token.
    public var password: String?

    /// Creates a request.
    public init(password: String? = nil) { self.password = password }

    /// Describes the request without the password.
    public var description: String { "DeleteAccountRequest(password: \(password == nil ? "nil" : "<redacted>"))" }

    /// The JSON fields, for `Describe`.
    public static let fields = [FieldDescriptor("password", "String", optional: true)]
}
