internal import Contracts
internal import Foundation
import RPC

/// The input rules of auth-svc where API.md leaves them open (see README "Choices"): email
/// syntax and normalization, display names, and the size bounds of tokens and passwords that
/// keep huge strings from reaching the hasher or the database.
enum InputRules {
    /// The longest email address accepted, in bytes (RFC 5321 §4.5.3.1.3 path limit less `<>`).
    static let maximumEmailLength = 254
    /// The longest local part, in bytes (RFC 5321 §4.5.3.1.1).
    static let maximumLocalPartLength = 64
    /// The longest display name, in characters.
    static let maximumDisplayNameLength = 100
    /// The longest password considered at all, in bytes; the policy's 256 characters fit.
    static let maximumPasswordBytes = 4096
    /// The longest opaque token (refresh, verification, reset) worth looking up.
    static let maximumTokenLength = 512
    /// The longest ID token worth parsing.
    static let maximumIDTokenLength = 16 * 1024

    /// Characters allowed in a local part besides letters and digits (RFC 5322 `atext`).
    private static let localSymbols = Set("!#$%&'*+/=?^_`{|}~-.".utf8)

    /// The normalized (trimmed, lower-cased) form of a syntactically valid address, or nil.
    ///
    /// Accepted: ASCII only, `local@domain`, local part of `atext` and dots (no leading,
    /// trailing or double dot), a domain of at least two dot-separated labels of letters,
    /// digits and inner hyphens.
    static func normalizedEmail(_ raw: String) -> String? {
        let email = raw.trimmingCharacters(in: .whitespaces).lowercased()
        let bytes = Array(email.utf8)
        guard bytes.count <= maximumEmailLength, bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
        let parts = bytes.split(separator: UInt8(ascii: "@"), omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let local = parts[0]
        let domain = parts[1]
        guard !local.isEmpty, local.count <= maximumLocalPartLength,
            local.allSatisfy({ isAlphanumeric($0) || localSymbols.contains($0) }),
            local.first != UInt8(ascii: "."), local.last != UInt8(ascii: "."),
            !containsDoubleDot(local)
        else { return nil }
        let labels = domain.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard labels.count >= 2 else { return nil }
        for label in labels {
            guard !label.isEmpty, label.count <= 63, label.allSatisfy({ isAlphanumeric($0) || $0 == UInt8(ascii: "-") }),
                label.first != UInt8(ascii: "-"), label.last != UInt8(ascii: "-")
            else { return nil }
        }
        return email
    }

    /// The normalized address of a request field, or INVALID_ARGUMENT `INVALID_EMAIL` naming it.
    static func requireEmail(_ raw: String, field: RequestField = .email) throws(RPCError) -> String {
        guard let email = normalizedEmail(raw) else {
            throw field.invalid(Self.emailProblem(raw), reason: .invalidEmail)
        }
        return email
    }

    /// What is wrong with an address, for the field violation.
    private static func emailProblem(_ raw: String) -> String {
        let trimmed = raw.trimmingCharacters(in: .whitespaces)
        if trimmed.isEmpty { return "is required" }
        if trimmed.utf8.count > maximumEmailLength { return "must be at most \(maximumEmailLength) bytes" }
        if trimmed.unicodeScalars.contains(where: { !$0.isASCII }) { return "must contain only ASCII characters" }
        return "is not valid (expected name@example.com)"
    }

    /// The display name to store: trimmed, nil when empty; INVALID_ARGUMENT when too long or
    /// holding control, format or line-separator characters.
    static func displayName(_ raw: String?, field: RequestField = .displayName) throws(RPCError) -> String? {
        guard let raw else { return nil }
        let name = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty else { return nil }
        guard name.count <= maximumDisplayNameLength else {
            throw field.invalid("must be at most \(maximumDisplayNameLength) characters")
        }
        let forbidden = name.unicodeScalars.contains { scalar in
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .unassigned, .privateUse: true
            default: false
            }
        }
        guard !forbidden else {
            throw field.invalid("must not contain control or invisible formatting characters")
        }
        return name
    }

    /// INVALID_ARGUMENT naming `field` when `password` is beyond any policy (so it never reaches
    /// the hasher); the policy itself is checked by `PasswordPolicy`.
    static func checkPasswordSize(_ password: String, field: RequestField) throws(RPCError) {
        guard password.utf8.count <= maximumPasswordBytes else {
            throw field.invalid("must be at most 256 characters", reason: .weakPassword)
        }
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    private static func containsDoubleDot(_ bytes: ArraySlice<UInt8>) -> Bool {
        zip(bytes, bytes.dropFirst()).contains { $0 == UInt8(ascii: ".") && $1 == UInt8(ascii: ".") }
    }
}
