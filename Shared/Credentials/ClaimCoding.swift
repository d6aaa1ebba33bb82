import Foundation

/// Decoding rules for claim values that issuers spell in more than one way.
///
/// - NumericDate (RFC 7519 §2): seconds since the epoch, integral or not; written back as
///   whole seconds.
/// - `aud` (RFC 7519 §4.1.3): one string or an array of strings.
/// - Booleans: a JSON boolean or the strings "true"/"false" (Apple sends `email_verified`,
///   `is_private_email` and sometimes `nonce_supported` as strings).
extension KeyedDecodingContainer {
    /// The NumericDate at `key`; throws when it is absent, not a number, or not a plausible time.
    func decodeNumericDate(forKey key: Key) throws -> Date {
        let seconds = try decode(Double.self, forKey: key)
        guard let date = NumericDate.date(fromSeconds: seconds) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: "not a NumericDate")
        }
        return date
    }

    /// The NumericDate at `key`, or nil when the member is absent or null.
    func decodeNumericDateIfPresent(forKey key: Key) throws -> Date? {
        guard try contains(key) && !decodeNil(forKey: key) else { return nil }
        return try decodeNumericDate(forKey: key)
    }

    /// The audience at `key` as a list, whether it was written as one string or an array.
    func decodeAudience(forKey key: Key) throws -> [String] {
        if let single = try? decode(String.self, forKey: key) {
            return [single]
        }
        return try decode([String].self, forKey: key)
    }

    /// The boolean at `key`, written as a JSON boolean or as "true"/"false"; nil when absent.
    func decodeLenientBoolIfPresent(forKey key: Key) throws -> Bool? {
        guard try contains(key) && !decodeNil(forKey: key) else { return nil }
        if let value = try? decode(Bool.self, forKey: key) {
            return value
        }
        switch try decode(String.self, forKey: key).lowercased() {
        case "true": return true
        case "false": return false
        default:
            throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: "not a boolean")
        }
    }
}

/// The writing side of the claim rules above.
extension KeyedEncodingContainer {
    /// Writes `date` at `key` as a NumericDate in whole seconds.
    mutating func encodeNumericDate(_ date: Date, forKey key: Key) throws {
        try encode(NumericDate.seconds(of: date), forKey: key)
    }

    /// Writes `audience` at `key`: one string for a single audience, an array otherwise.
    mutating func encodeAudience(_ audience: [String], forKey key: Key) throws {
        if audience.count == 1, let single = audience.first {
            try encode(single, forKey: key)
        } else {
            try encode(audience, forKey: key)
        }
    }
}

/// Conversions between `Date` and JWT NumericDate seconds.
enum NumericDate {
    /// Latest accepted time, year 9999: bounds the arithmetic on hostile values.
    private static let latestSeconds: Double = 253_402_300_799

    /// The date `seconds` after the epoch, or nil when it is not finite or outside 0...9999 AD.
    static func date(fromSeconds seconds: Double) -> Date? {
        guard seconds.isFinite, seconds >= 0, seconds <= latestSeconds else { return nil }
        return Date(timeIntervalSince1970: seconds)
    }

    /// The whole seconds since the epoch of `date`, rounded down.
    static func seconds(of date: Date) -> Int64 {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        guard seconds.isFinite else { return 0 }
        return Int64(max(min(seconds, latestSeconds), 0))
    }

    /// `date` truncated to whole seconds, as it comes back after encoding.
    static func wholeSeconds(_ date: Date) -> Date {
        Date(timeIntervalSince1970: Double(seconds(of: date)))
    }
}
