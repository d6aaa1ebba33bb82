/// What is wrong with a proposed password; services answer INVALID_ARGUMENT/`WEAK_PASSWORD`
/// and may use the case for the message.
package enum PasswordProblem: Sendable, Hashable, CustomStringConvertible {
    /// Fewer characters than the minimum.
    case tooShort(minimum: Int)
    /// More characters (or UTF-8 bytes) than the maximum.
    case tooLong(maximum: Int)
    /// The password is the account's email address, or its part before the "@".
    case equalsEmail
    /// The password is in the built-in list of common passwords.
    case tooCommon

    /// A sentence for the user.
    package var description: String {
        switch self {
        case .tooShort(let minimum): "The password must be at least \(minimum) characters long."
        case .tooLong(let maximum): "The password must be at most \(maximum) characters long."
        case .equalsEmail: "The password must not be your email address."
        case .tooCommon: "This password is too common. Choose a less predictable one."
        }
    }
}

/// The rules a new password must meet (API.md §3 "Passwords"): length, not the email, not a
/// common password — and no composition rules (NIST SP 800-63B §5.1.1.2).
///
/// Length is counted in `Character`s, Swift's extended grapheme clusters — what a user sees as
/// one character: "é" is one whether composed or not, and so is an emoji with modifiers.
/// Because one grapheme cluster can hold any number of combining marks, the UTF-8 size is also
/// capped (`maximumByteCount`), which bounds the work hashing may be asked to do.
/// Immutable value; thread-safe.
package struct PasswordPolicy: Sendable {
    /// The fewest characters allowed.
    package let minimumLength: Int
    /// The most characters allowed.
    package let maximumLength: Int
    /// The most UTF-8 bytes allowed, whatever the character count.
    package let maximumByteCount: Int

    /// A policy with the given bounds; by default 8 to 256 characters and at most 4 KiB.
    package init(minimumLength: Int = 8, maximumLength: Int = 256, maximumByteCount: Int = 4096) {
        self.minimumLength = minimumLength
        self.maximumLength = maximumLength
        self.maximumByteCount = maximumByteCount
    }

    /// How many entries the built-in list of common passwords has.
    package static var commonPasswordCount: Int {
        CommonPasswords.all.count
    }

    /// The first problem with `password` for the account `email`, or nil when it is acceptable.
    ///
    /// Checked in order: length, then equality with the email or its local part (before the
    /// "@"), case-insensitively, then the common list, compared lower-cased.
    package func check(password: String, email: String) -> PasswordProblem? {
        if password.utf8.count > maximumByteCount {
            return .tooLong(maximum: maximumLength)
        }
        let length = password.count
        if length < minimumLength {
            return .tooShort(minimum: minimumLength)
        }
        if length > maximumLength {
            return .tooLong(maximum: maximumLength)
        }
        let lowered = password.lowercased()
        let email = email.lowercased()
        let localPart = email.split(separator: "@", maxSplits: 1).first.map(String.init) ?? email
        if lowered == email || lowered == localPart {
            return .equalsEmail
        }
        if CommonPasswords.contains(lowered) {
            return .tooCommon
        }
        return nil
    }
}
