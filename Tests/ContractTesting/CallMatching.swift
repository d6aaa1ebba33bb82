package import RPC

/// What a call ended with, as the two sides of a contract test see it.
package enum CallOutcome: Sendable, Hashable {
    /// The response messages, in order, of a call that ended OK.
    case messages([JSONValue])
    /// The status of a call that failed.
    case failure(code: RPCCode, reason: String?, message: String)

    /// A one-line account, for reports.
    package var summary: String {
        switch self {
        case .messages(let messages):
            messages.count == 1 ? "the message \(JSONText.compact(messages[0]))" : "\(messages.count) messages"
        case .failure(let code, let reason, let message):
            "status \(code.name)\(reason.map { " (\($0))" } ?? "")\(message.isEmpty ? "" : ": \(message)")"
        }
    }
}

/// Compares requests and outcomes with an interaction.
package enum CallMatching {
    /// Every way a request differs from `expectation`: each metadata entry the contract names,
    /// then the message.
    package static func mismatches(
        of metadata: Metadata, message: JSONValue, against expectation: RequestExpectation
    ) throws(ContractError) -> [Mismatch] {
        var found = metadataMismatches(of: metadata, against: expectation)
        found += try JSONMatching.mismatches(
            expected: expectation.message, actual: message, rules: expectation.matchingRules.message)
        return found
    }

    /// Every metadata entry `expectation` names that `metadata` lacks or sends otherwise.
    package static func metadataMismatches(of metadata: Metadata, against expectation: RequestExpectation) -> [Mismatch] {
        var found: [Mismatch] = []
        for (name, example) in expectation.metadata.sorted(by: { $0.key < $1.key }) {
            let matcher = expectation.matchingRules.metadata[name] ?? .equality
            let wanted: String =
                switch matcher.match {
                case .regex: "a value matching /\(matcher.regex ?? "")/"
                case .type: "any value"
                case .integer: "a whole number"
                case .equality: "\"\(example)\""
                }
            guard let value = metadata[name] else {
                found.append(Mismatch(path: "metadata '\(name)'", expected: wanted, actual: "nothing (not sent)"))
                continue
            }
            let matches =
                switch matcher.match {
                case .regex: JSONMatching.fullyMatches(value, matcher.regex ?? "")
                case .type: true
                case .integer: Int(value) != nil
                case .equality: value == example
                }
            if !matches { found.append(Mismatch(path: "metadata '\(name)'", expected: wanted, actual: "\"\(value)\"")) }
        }
        return found
    }

    /// Every way `outcome` differs from what `expectation` asks for.
    package static func mismatches(
        of outcome: CallOutcome, against expectation: ResponseExpectation
    ) throws(ContractError) -> [Mismatch] {
        switch (expectation, outcome) {
        case (.message(let expected, let rules), .messages(let messages)):
            guard messages.count == 1 else {
                return [Mismatch(path: "response", expected: "one message", actual: "\(messages.count) messages")]
            }
            return try JSONMatching.mismatches(expected: expected, actual: messages[0], rules: rules)
        case (.message(let expected, _), .failure):
            return [
                Mismatch(path: "response", expected: "the message \(JSONText.compact(expected))", actual: outcome.summary)
            ]
        case (.status(let code, let reason), .failure(let actualCode, let actualReason, _)):
            var found: [Mismatch] = []
            if code != actualCode {
                found.append(Mismatch(path: "status", expected: code.name, actual: outcome.summary))
            }
            if let reason, reason != actualReason {
                found.append(Mismatch(path: "reason", expected: reason, actual: actualReason ?? "no reason"))
            }
            return found
        case (.status(let code, let reason), .messages):
            return [
                Mismatch(path: "response", expected: "status \(code.name)\(reason.map { " (\($0))" } ?? "")", actual: outcome.summary)
            ]
        }
    }
}
