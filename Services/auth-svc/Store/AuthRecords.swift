internal import Contracts
internal import Foundation
import ServiceKit
import Storage

/// A user as stored, with the providers it can sign in with.
struct UserRecord: Sendable, Hashable {
    /// The user id (a lower-case UUID): the `sub` of access tokens.
    var id: String
    /// The lower-cased email address; "" for an ID-token user whose provider gave none.
    var email: String
    /// Whether the address was proved: by a verification link, a reset link or a provider.
    var emailVerified: Bool
    /// The name to show, if any.
    var displayName: String?
    /// The PHC string of the password, or nil for an account without one.
    var passwordHash: String?
    /// The sign-in methods: "password", "google", "apple".
    var providers: [String]
    /// When the account was created (Unix seconds).
    var createdAt: Int64

    /// The account as API.md's `User` message.
    var message: User {
        User(
            id: id, email: email, emailVerified: emailVerified, displayName: displayName, providers: providers,
            createdAt: Timestamp.rfc3339(createdAt))
    }
}

/// A session as stored: one sign-in and the refresh tokens rotated within it.
struct SessionRecord: Sendable, Hashable {
    /// The session id: the `sid` claim of its access tokens.
    var id: String
    /// The signed-in user.
    var userID: String
    /// How the user signed in: "password", "google" or "apple".
    var method: String
    /// When the user last proved who they are in this session (sign-in, password change).
    var authenticatedAt: Int64
    /// When the session ends regardless of use (30 days after sign-in).
    var expiresAt: Int64
    /// When it was revoked, if it was.
    var revokedAt: Int64?
}

/// What a verification or reset token is for.
enum EmailTokenPurpose: String, Sendable {
    /// Proves an email address (`VerifyEmail`); lives 24 hours.
    case verifyEmail = "verify-email"
    /// Sets a new password (`ResetPassword`); lives 1 hour.
    case resetPassword = "reset-password"

    /// How long a token of this purpose stays valid, in seconds (API.md §3).
    var lifetime: Int64 {
        switch self {
        case .verifyEmail: 24 * 3600
        case .resetPassword: 3600
        }
    }
}

/// An email to queue in the outbox.
struct OutgoingEmail: Sendable, Hashable {
    /// The recipient address.
    var recipient: String
    /// What the email is for: its `X-Storefront-Kind` header.
    var kind: EmailTokenPurpose
    /// The subject line.
    var subject: String
    /// The plain-text body.
    var body: String
}

/// An email in the outbox, due for a delivery attempt.
struct OutboxEntry: Sendable, Hashable {
    /// The outbox row id; stable across attempts, so redelivery overwrites rather than duplicates.
    var id: Int64
    /// The email itself.
    var email: OutgoingEmail
    /// Delivery attempts made so far.
    var attempts: Int
    /// When it was queued (Unix seconds), with the token it carries.
    var queuedAt: Int64

    /// When the link in it stops working: a delivery after that brings only a dead link.
    var linkExpiresAt: Int64 { queuedAt + email.kind.lifetime }
}

/// What is on record against a sign-in attempt (``SignInThrottle``), shared by every replica.
struct SignInRecord: Sendable, Hashable {
    /// Failures of the attempt's account within the window.
    var accountFailures: Int
    /// Failures from the attempt's client address within the window.
    var addressFailures: Int
    /// When the account's lock ends (Unix milliseconds), or nil when none is on record; a
    /// lock on record may have ended already.
    var lockedUntil: Int64?

    /// Whether a successful sign-in has anything to clear.
    var hasAccountRecord: Bool { accountFailures > 0 || lockedUntil != nil }
}
