internal import Contracts
import Credentials
import RPC

/// A request field as a program names it (its path, kept in the `fieldViolations` detail) and
/// as a person reads it (the subject of the message): "The new password must be at least 8
/// characters long.", never "newPassword: …". Immutable; thread-safe.
struct RequestField: Sendable, Hashable {
    /// The field's path in the request, e.g. `newPassword`.
    let path: String
    /// The field in the user's words, starting a sentence, e.g. "The new password".
    let subject: String

    /// `email` of SignUp, SignIn, ResendVerification and RequestPasswordReset.
    static let email = RequestField(path: "email", subject: "The email address")
    /// `password` of SignUp, SignIn and DeleteAccount.
    static let password = RequestField(path: "password", subject: "The password")
    /// `newPassword` of ResetPassword and ChangePassword.
    static let newPassword = RequestField(path: "newPassword", subject: "The new password")
    /// `currentPassword` of ChangePassword.
    static let currentPassword = RequestField(path: "currentPassword", subject: "The current password")
    /// `displayName` of SignUp and UpdateProfile.
    static let displayName = RequestField(path: "displayName", subject: "The display name")
    /// `token` of VerifyEmail and ResetPassword: the one in the emailed link.
    static let token = RequestField(path: "token", subject: "The link's token")
    /// `idToken` of SignInWithIdToken.
    static let idToken = RequestField(path: "idToken", subject: "The ID token")
    /// `rawNonce` of SignInWithIdToken.
    static let rawNonce = RequestField(path: "rawNonce", subject: "The nonce")
    /// `afterSequence` of the revocation feed.
    static let afterSequence = RequestField(path: "afterSequence", subject: "The sequence number")

    /// `INVALID_ARGUMENT` naming this field, with `reason` when given: `description` (e.g. "must
    /// be at most 256 characters") in the field violation, and the sentence in the message.
    func invalid(_ description: String, reason: AuthReason? = nil) -> RPCError {
        guard let reason else { return RPCError.invalidField(path, description, subject: subject) }
        return reason.invalidField(path, description, subject: subject)
    }
}

extension PasswordProblem {
    /// What the password must be, to follow a field's subject: "must be at least 8 characters long".
    var requirement: String {
        switch self {
        case .tooShort(let minimum): "must be at least \(minimum) characters long"
        case .tooLong(let maximum): "must be at most \(maximum) characters long"
        case .equalsEmail: "must not be your email address"
        case .tooCommon: "is too common; choose a less predictable one"
        }
    }
}
