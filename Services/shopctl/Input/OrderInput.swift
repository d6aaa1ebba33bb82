import Contracts
import Foundation
import RPC

/// The inputs of `order place` resolved into a `PlaceOrderRequest`: each address field from
/// its flag, else its environment variable (`SHOP_SHIP_NAME`, `SHOP_SHIP_LINE1`, …), else the
/// saved profile; the card from flags or `SHOP_CARD_NUMBER`, `SHOP_CARD_EXP`, `SHOP_CARD_CVC`.
/// Pure: everything it reads is passed in.
struct OrderInput: Sendable, Equatable {
    /// The address fields as given by flags (nil when absent).
    var name, line1, line2, city, postalCode, country: String?
    /// The card as given by flags (nil when absent).
    var card, expiry, cvc: String?

    /// Why the inputs do not make an order, in the words of the flags.
    struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        /// What is wrong.
        let description: String
    }

    /// The request these inputs make with `environment` and `profile`.
    func request(environment: [String: String], profile: Address?) throws(Problem) -> PlaceOrderRequest {
        PlaceOrderRequest(
            shippingAddress: try address(environment: environment, profile: profile),
            payment: try cardDetails(environment: environment))
    }

    /// The shipping address: flag, else environment, else profile, per field.
    func address(environment: [String: String], profile: Address?) throws(Problem) -> Address {
        func pick(_ flag: String?, _ variable: String, _ saved: String?) -> String? {
            let value = flag ?? environment[variable].flatMap { $0.isEmpty ? nil : $0 } ?? saved
            return value?.trimmingCharacters(in: .whitespaces)
        }
        let fields: [(flag: String, value: String?)] = [
            ("--name", pick(name, "SHOP_SHIP_NAME", profile?.name)),
            ("--line1", pick(line1, "SHOP_SHIP_LINE1", profile?.line1)),
            ("--city", pick(city, "SHOP_SHIP_CITY", profile?.city)),
            ("--postal-code", pick(postalCode, "SHOP_SHIP_POSTAL_CODE", profile?.postalCode)),
            ("--country", pick(country, "SHOP_SHIP_COUNTRY", profile?.country)),
        ]
        let missing = fields.filter { $0.value?.isEmpty ?? true }.map(\.flag)
        guard missing.isEmpty else {
            throw Problem(
                description: "The shipping address needs \(missing.joined(separator: ", ")) "
                    + "(or SHOP_SHIP_* variables, or a profile saved with --save-profile).")
        }
        let values = fields.map { $0.value ?? "" }
        let countryCode = values[4].uppercased()
        guard countryCode.count == 2, countryCode.allSatisfy({ ("A"..."Z").contains($0) }) else {
            throw Problem(description: "--country must be a two-letter ISO 3166 code such as US (got '\(values[4])').")
        }
        let secondLine = pick(line2, "SHOP_SHIP_LINE2", profile?.line2)
        return Address(
            name: values[0], line1: values[1], line2: secondLine?.isEmpty == false ? secondLine : nil, city: values[2],
            postalCode: values[3], country: countryCode)
    }

    /// The card number that --card or SHOP_CARD_NUMBER gives; nil when neither does (then
    /// `order place` asks for it at a prompt that does not echo it, or reads --card-stdin).
    func givenCardNumber(environment: [String: String]) -> String? {
        guard let number = card ?? environment["SHOP_CARD_NUMBER"], !number.isEmpty else { return nil }
        return number
    }

    /// The card: number, expiry and cvc from flags, else the environment.
    func cardDetails(environment: [String: String]) throws(Problem) -> CardDetails {
        guard let rawNumber = givenCardNumber(environment: environment) else {
            throw Problem(description: "The card number is missing: give --card or set SHOP_CARD_NUMBER.")
        }
        let number = try Self.cardNumber(rawNumber)
        let rest = try expiryAndCode(environment: environment)
        return CardDetails(cardNumber: number, expMonth: rest.month, expYear: rest.year, cvc: rest.cvc)
    }

    /// The digits of a card number as typed (spaces and dashes dropped), by the rule order-svc
    /// enforces (``CardNumber``); the message never repeats the number.
    static func cardNumber(_ text: String) throws(Problem) -> String {
        guard let number = CardNumber.digits(of: text) else {
            throw Problem(description: "The card number must be 12 to 19 digits.")
        }
        return number
    }

    /// The expiry and security code, from flags, else the environment.
    func expiryAndCode(environment: [String: String]) throws(Problem) -> (month: Int, year: Int, cvc: String) {
        guard let rawExpiry = expiry ?? environment["SHOP_CARD_EXP"], !rawExpiry.isEmpty else {
            throw Problem(description: "The expiry is missing: give --exp MM/YY or set SHOP_CARD_EXP.")
        }
        guard let expiryDate = Self.parseExpiry(rawExpiry) else {
            throw Problem(description: "--exp must be MM/YY or MM/YYYY with a month 01 to 12 (got '\(rawExpiry)').")
        }
        guard let code = cvc ?? environment["SHOP_CARD_CVC"], !code.isEmpty else {
            throw Problem(description: "The security code is missing: give --cvc or set SHOP_CARD_CVC.")
        }
        guard (3...4).contains(code.count), code.allSatisfy(\.isASCIIDigit) else {
            throw Problem(description: "--cvc must be 3 or 4 digits.")
        }
        return (expiryDate.month, expiryDate.year, code)
    }

    /// The month and four-digit year of "MM/YY" or "MM/YYYY" ("12/30" is December 2030); nil
    /// for anything else.
    static func parseExpiry(_ text: String) -> (month: Int, year: Int)? {
        let parts = text.trimmingCharacters(in: .whitespaces).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, (1...2).contains(parts[0].count), parts[1].count == 2 || parts[1].count == 4,
            parts.allSatisfy({ $0.allSatisfy(\.isASCIIDigit) }),
            let month = Int(parts[0]), let year = Int(parts[1]), (1...12).contains(month)
        else { return nil }
        return (month, parts[1].count == 2 ? 2000 + year : year)
    }
}

/// The saved shipping address, `profile.json` (mode 0600): written by `order place
/// --save-profile`, read as the last fallback of each address field. Never holds card data.
struct ShippingProfile: Sendable {
    /// Where the profile lives.
    let paths: ConfigPaths

    /// The saved address; nil when none was saved.
    func load() throws(ShopctlError) -> Address? {
        guard let data = try PrivateFile.read(paths.profile) else { return nil }
        do {
            return try JSONCodec.shared.decode(Address.self, from: data)
        } catch {
            throw .local("\(paths.profile.path) is not a saved address: \(error.message)", hint: "delete it or save a new one with --save-profile")
        }
    }

    /// Saves `address` as the profile.
    func save(_ address: Address) throws(ShopctlError) {
        let data: Data
        do {
            data = try JSONCodec.shared.encode(address)
        } catch {
            throw .local("Cannot encode the address: \(error.message)")
        }
        try PrivateFile.write(data, to: paths.profile)
    }
}
