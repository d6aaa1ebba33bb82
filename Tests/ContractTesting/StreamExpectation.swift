package import RPC
package import JSON

/// The response of a server-streaming call as a consumer relies on it: the messages it reads,
/// in order, each with its matchers, and how the stream ends after them.
///
/// In a contract file: `{"messages": [{"message", "matchingRules", "after"?}, …]}` plus
/// `"staysOpen": true` for a watch the consumer ends itself, or `"status": {"code", "reason"}`
/// for a stream that fails after its messages; a stream with neither ends OK.
package struct StreamExpectation: Codable, Sendable, Hashable {
    /// The messages, in the order the consumer reads them.
    package var messages: [StreamedMessage]
    /// What follows the last of them.
    package var end: StreamEnd

    /// Creates a stream expectation.
    package init(messages: [StreamedMessage], end: StreamEnd) {
        self.messages = messages
        self.end = end
    }

    /// Every provider state applied mid-stream, in order.
    package var midStreamStates: [ProviderState] { messages.compactMap(\.after) }

    private enum CodingKeys: String, CodingKey {
        case messages, staysOpen, status
    }

    /// Reads the form described above.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        messages = try container.decode([StreamedMessage].self, forKey: .messages)
        if try container.decodeIfPresent(Bool.self, forKey: .staysOpen) == true {
            end = .open
        } else if let status = try container.decodeIfPresent(StatusText.self, forKey: .status) {
            let (code, reason) = try status.decoded()
            end = .failure(code: code, reason: reason)
        } else {
            end = .ok
        }
    }

    /// Writes the form described above: `staysOpen` or `status` only when they apply.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(messages, forKey: .messages)
        switch end {
        case .open: try container.encode(true, forKey: .staysOpen)
        case .ok: break
        case .failure(let code, let reason): try container.encode(StatusText(code: code.name, reason: reason), forKey: .status)
        }
    }
}

/// How a response stream ends after the messages its contract lists.
package enum StreamEnd: Sendable, Hashable, CustomStringConvertible {
    /// It stays open — a watch — until the consumer cancels it; the provider replay cancels it
    /// once it has read the listed messages.
    case open
    /// It ends with status OK.
    case ok
    /// It fails with this code and, when given, the `shop-error-reason`.
    case failure(code: RPCCode, reason: String?)

    /// In words, for reports: `stays open`, `ends OK`, `ends with NOT_FOUND (PRODUCT_NOT_FOUND)`.
    package var description: String {
        switch self {
        case .open: "stays open"
        case .ok: "ends OK"
        case .failure(let code, let reason): "ends with \(code.name)\(reason.map { " (\($0))" } ?? "")"
        }
    }
}

/// One message of a response stream: its example, its matchers, and — for a message that only
/// comes once something happens, like a watch's next change — the provider state that makes
/// it happen, which the provider replay sets up after reading the message before.
package struct StreamedMessage: Codable, Sendable, Hashable {
    /// What the provider does, once the message before has been read, to make this one come
    /// (another device adds to the basket, the session is revoked); nil for a message the
    /// provider sends on its own.
    package var after: ProviderState?
    /// The example message.
    package var message: JSONValue
    /// Matchers by JSON path (default: equality, no extra fields).
    package var rules: [String: Matcher]

    /// Creates a streamed message.
    package init(_ message: JSONValue, rules: [String: Matcher], after: ProviderState? = nil) {
        self.message = message
        self.rules = rules
        self.after = after
    }

    /// A streamed message built from a `Contracts` value.
    package init(encoding value: some Encodable, rules: [String: Matcher], after: ProviderState? = nil) throws {
        self.init(try JSONValue(encoding: value), rules: rules, after: after)
    }

    private enum CodingKeys: String, CodingKey {
        case after, message, matchingRules
    }

    /// Reads `{"message", "matchingRules", "after"?}`; absent rules are none.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        after = try container.decodeIfPresent(ProviderState.self, forKey: .after)
        message = try container.decode(JSONValue.self, forKey: .message)
        rules = try container.decodeIfPresent([String: Matcher].self, forKey: .matchingRules) ?? [:]
    }

    /// Writes what ``init(from:)`` reads; `after` only when there is one.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(after, forKey: .after)
        try container.encode(message, forKey: .message)
        try container.encode(rules, forKey: .matchingRules)
    }
}

extension ResponseExpectation {
    /// A response stream: `messages`, then `end`.
    package static func stream(_ messages: [StreamedMessage], then end: StreamEnd) -> ResponseExpectation {
        .stream(StreamExpectation(messages: messages, end: end))
    }
}
