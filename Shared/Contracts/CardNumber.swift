/// The shape of a card number, in one place so that shopctl, which checks it before it asks
/// for the rest of the card, and order-svc, which enforces it, cannot drift apart (as
/// ``ProductValidation`` is for products).
///
/// Only the shape: order-svc also checks the Luhn digit and the issuer, shopctl leaves those
/// to the server.
public enum CardNumber {
    /// How many digits a card number has (ISO/IEC 7812: 12 to 19).
    public static let digitCount = 12...19

    /// The digits of `text`, a card number as people type it with spaces and dashes between
    /// groups, when they are 12 to 19 ASCII digits; nil otherwise.
    public static func digits(of text: String) -> String? {
        let digits = text.filter { $0 != " " && $0 != "-" }
        guard digitCount.contains(digits.count), digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return digits
    }
}
