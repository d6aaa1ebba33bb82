package import RPC
package import JSON

/// What a call ended with, as the two sides of a contract test see it.
package enum CallOutcome: Sendable, Hashable {
    /// The response messages, in order, of a call that ended OK.
    case messages([JSONValue])
    /// The status of a call that failed.
    case failure(code: RPCCode, reason: String?, message: String)
    /// The messages read from a stream that was still open when the reader stopped — after as
    /// many as the contract lists — and cancelled it.
    case openStream([JSONValue])

    /// A one-line account, for reports.
    package var summary: String {
        switch self {
        case .messages(let messages):
            messages.count == 1 ? "the message \(JSONText.compact(messages[0]))" : "\(messages.count) messages"
        case .failure(let code, let reason, let message):
            "status \(code.name)\(reason.map { " (\($0))" } ?? "")\(message.isEmpty ? "" : ": \(message)")"
        case .openStream(let messages):
            "\(messages.count) message\(messages.count == 1 ? "" : "s") on a stream still open"
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
        try mismatches(of: metadata, messages: [message], against: expectation)
    }

    /// Every way a request of one or more messages differs from `expectation`: the metadata,
    /// then the message — or, for a client stream, the number of messages and each message
    /// against its example, under the same message rules.
    package static func mismatches(
        of metadata: Metadata, messages: [JSONValue], against expectation: RequestExpectation
    ) throws(ContractError) -> [Mismatch] {
        var found = metadataMismatches(of: metadata, against: expectation)
        let rules = expectation.matchingRules.message
        guard expectation.streamsRequests else {
            guard messages.count == 1 else {
                return found + [Mismatch(path: "request", expected: "one message", actual: "\(messages.count) messages")]
            }
            return found + (try JSONMatching.mismatches(expected: expectation.message, actual: messages[0], rules: rules))
        }
        if messages.count != expectation.messages.count {
            found.append(
                Mismatch(
                    path: "request stream", expected: "\(expectation.messages.count) messages",
                    actual: "\(messages.count) messages"))
        }
        for (index, (expected, actual)) in zip(expectation.messages, messages).enumerated() {
            found += try numbered(index, JSONMatching.mismatches(expected: expected, actual: actual, rules: rules))
        }
        return found
    }

    /// `mismatches` of the message at `index` of a stream, their paths prefixed `message N:` (1-based).
    private static func numbered(_ index: Int, _ mismatches: [Mismatch]) -> [Mismatch] {
        mismatches.map { Mismatch(path: "message \(index + 1): \($0.path)", expected: $0.expected, actual: $0.actual) }
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
        case (.message(let expected, _), .failure), (.message(let expected, _), .openStream):
            return [
                Mismatch(path: "response", expected: "the message \(JSONText.compact(expected))", actual: outcome.summary)
            ]
        case (.status(let code, let reason), .failure(let actualCode, let actualReason, _)):
            return statusMismatches(code: code, reason: reason, actual: outcome, actualCode: actualCode, actualReason: actualReason)
        case (.status(let code, let reason), .messages), (.status(let code, let reason), .openStream):
            return [
                Mismatch(path: "response", expected: "status \(code.name)\(reason.map { " (\($0))" } ?? "")", actual: outcome.summary)
            ]
        case (.stream(let stream), _):
            return try mismatches(of: outcome, against: stream)
        }
    }

    /// Every way a stream's outcome differs from `stream`: each message read against its
    /// example, then the number of messages and how the stream ended.
    private static func mismatches(of outcome: CallOutcome, against stream: StreamExpectation) throws(ContractError) -> [Mismatch] {
        let wanted = "\(stream.messages.count) message\(stream.messages.count == 1 ? "" : "s"), then the stream \(stream.end)"
        let received: [JSONValue]
        var found: [Mismatch] = []
        switch (outcome, stream.end) {
        case (.failure(let code, let reason, _), .failure(let expectedCode, let expectedReason)):
            // The messages before a failure are not kept; the status is what is compared.
            return statusMismatches(code: expectedCode, reason: expectedReason, actual: outcome, actualCode: code, actualReason: reason)
        case (.failure, _):
            return [Mismatch(path: "response stream", expected: wanted, actual: outcome.summary)]
        case (.openStream(let messages), .open):
            received = messages
        case (.openStream(let messages), _), (.messages(let messages), .failure):
            received = messages
            found.append(Mismatch(path: "response stream", expected: wanted, actual: outcome.summary))
        case (.messages(let messages), .ok):
            received = messages
            if messages.count != stream.messages.count {
                found.append(Mismatch(path: "response stream", expected: wanted, actual: "\(messages.count) messages, then OK"))
            }
        case (.messages(let messages), .open):
            received = messages
            found.append(
                Mismatch(path: "response stream", expected: wanted, actual: "\(messages.count) messages, then the stream ended OK"))
        }
        var compared: [Mismatch] = []
        for (index, (expected, actual)) in zip(stream.messages, received).enumerated() {
            compared += try numbered(index, JSONMatching.mismatches(expected: expected.message, actual: actual, rules: expected.rules))
        }
        return compared + found
    }

    /// How a failed call's code and reason differ from the expected ones.
    private static func statusMismatches(
        code: RPCCode, reason: String?, actual outcome: CallOutcome, actualCode: RPCCode, actualReason: String?
    ) -> [Mismatch] {
        var found: [Mismatch] = []
        if code != actualCode {
            found.append(Mismatch(path: "status", expected: code.name, actual: outcome.summary))
        }
        if let reason, reason != actualReason {
            found.append(Mismatch(path: "reason", expected: reason, actual: actualReason ?? "no reason"))
        }
        return found
    }
}
