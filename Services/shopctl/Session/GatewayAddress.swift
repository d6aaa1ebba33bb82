import Foundation
import RPC

/// The gateway's address as a person writes it — `host:port`, `http://host:port`, or a bare
/// `host` — read into the `host:port` shopctl connects to.
///
/// A bare host means the gateway's own default port, 8080; `http://host` without a port means
/// 80, as every URL does. `https://` is refused: shopctl speaks HTTP/2 without TLS (h2c) and
/// cannot reach a gateway through TLS yet (deploy/README.md, "TLS in front of the gateway").
/// So is a user name or password in the address (`user:pw@host`): shopctl sends none, and no
/// message repeats what comes before an `@`, so a password typed there is never printed.
enum GatewayAddress {
    /// The port of a bare host: the port the gateway listens on by default.
    static let defaultPort = 8080

    /// The address `text` names.
    /// - Throws: a usage error (`USAGE`, or `TLS_NOT_SUPPORTED` for `https://`) saying what
    ///   forms are accepted.
    static func parse(_ text: String) throws(ShopctlError) -> SocketAddressText {
        guard !text.contains("@") else {
            throw .usage(
                "--gateway must not hold a user name or password (got '\(shown(text))'): shopctl sends none; give host:port or http://host:port.")
        }
        var rest = Substring(text.trimmingCharacters(in: .whitespaces))
        var portWithoutOne = defaultPort
        if let schemeEnd = rest.range(of: "://") {
            let scheme = rest[..<schemeEnd.lowerBound].lowercased()
            rest = rest[schemeEnd.upperBound...]
            switch scheme {
            case "http": portWithoutOne = 80
            case "https": throw tlsNotSupported(text)
            default: throw malformed(text, because: "shopctl speaks http:// (h2c) only, not \(scheme)://")
            }
            if rest.hasSuffix("/") { rest = rest.dropLast() }
        }
        guard !rest.isEmpty, !rest.contains("/"), !rest.contains("?"),
            !rest.contains(where: \.isWhitespace)
        else { throw malformed(text, because: nil) }
        if let address = SocketAddressText(String(rest)) {
            // An IPv6 literal is bracketed, or its last group would be read as the port.
            guard !address.host.contains(":") || rest.hasPrefix("[") else {
                throw malformed(text, because: "write an IPv6 address in brackets, e.g. [::1]:8080")
            }
            guard (1...65535).contains(address.port) else { throw malformed(text, because: "the port must be 1 to 65535") }
            return address
        }
        // No port: a bare name, IPv4 literal or bracketed IPv6 literal.
        let isBracketed = rest.hasPrefix("[") && rest.hasSuffix("]")
        guard isBracketed || !rest.contains(":") else { throw malformed(text, because: nil) }
        let host = isBracketed ? String(rest.dropFirst().dropLast()) : String(rest)
        guard !host.isEmpty else { throw malformed(text, because: nil) }
        return SocketAddressText(host: host, port: portWithoutOne)
    }

    /// The refusal of an `https://` address.
    static func tlsNotSupported(_ text: String) -> ShopctlError {
        ShopctlError(
            .usage, reason: "TLS_NOT_SUPPORTED",
            "shopctl does not speak TLS yet: give the gateway's plain host:port, not '\(shown(text))'; to offer TLS to others, put a TLS-terminating proxy in front of the gateway (deploy/README.md, \"TLS in front of the gateway\")")
    }

    private static func malformed(_ text: String, because reason: String?) -> ShopctlError {
        let why = reason.map { " (\($0))" } ?? ""
        return .usage(
            "--gateway must be host:port, http://host:port or a host name, e.g. 127.0.0.1:8080 (got '\(shown(text))')\(why).")
    }

    /// `text` as an error may repeat it: everything up to its last `@` (a user name and
    /// password) left out.
    static func shown(_ text: String) -> String {
        guard let at = text.lastIndex(of: "@") else { return text }
        return "…" + text[text.index(after: at)...]
    }
}
