package import Contracts
package import RPC
package import JSON

/// An interaction as a consumer test declares it: everything but the example request, which
/// is what the consumer's real code sends (recorded in record mode, checked otherwise).
package struct InteractionSpec: Sendable, Hashable {
    /// What the call is for, unique within its contract.
    package var description: String
    /// What must be true on the provider.
    package var providerStates: [ProviderState]
    /// The method's `:path`.
    package var path: String
    /// Whether the consumer sends a stream of request messages: the method is client-streaming
    /// (or bidirectional), as `Contracts` says.
    package var streamsRequests: Bool
    /// The metadata the consumer must send, by name, with how its value is compared
    /// (`equality` compares with the recorded value).
    package var metadata: [String: Matcher]
    /// Matchers for the request message by JSON path; unlisted paths must equal the recorded example.
    package var messageRules: [String: Matcher]
    /// Request values the provider side takes from its states.
    package var generators: Generators
    /// What the consumer expects back.
    package var response: ResponseExpectation

    /// Declares an interaction.
    package init(
        _ description: String, given providerStates: [ProviderState] = [], path: String,
        metadata: [String: Matcher] = [:], messageRules: [String: Matcher] = [:], generators: Generators = Generators(),
        response: ResponseExpectation
    ) {
        self.description = description
        self.providerStates = providerStates
        self.path = path
        let kind = APIDescription.allMethods.first { $0.path == path }?.kind
        self.streamsRequests = kind == .clientStreaming || kind == .bidirectionalStreaming
        self.metadata = metadata
        self.messageRules = messageRules
        self.generators = generators
        self.response = response
    }

    /// The declaration of a recorded interaction: metadata without a matcher compare by equality.
    package init(_ interaction: Interaction) {
        var metadata: [String: Matcher] = [:]
        for name in interaction.request.metadata.keys {
            metadata[name] = interaction.request.matchingRules.metadata[name] ?? .equality
        }
        self.init(
            interaction.description, given: interaction.providerStates, path: interaction.request.path,
            metadata: metadata, messageRules: interaction.request.matchingRules.message,
            generators: interaction.request.generators, response: interaction.response)
        streamsRequests = interaction.request.streamsRequests
    }

    /// The interaction, with `message` and the named entries of `metadata` as the example request.
    package func interaction(metadata sent: Metadata, message: JSONValue) -> Interaction {
        interaction(metadata: sent, messages: [message])
    }

    /// The interaction, with `messages` (one, or a client stream's) and the named entries of
    /// `metadata` as the example request.
    package func interaction(metadata sent: Metadata, messages: [JSONValue]) -> Interaction {
        var examples: [String: String] = [:]
        for name in metadata.keys { examples[name] = sent[name] ?? "" }
        return Interaction(
            description: description, providerStates: providerStates,
            request: RequestExpectation(
                path: path, metadata: examples, messages: messages, streamsRequests: streamsRequests,
                matchingRules: RequestMatchingRules(metadata: metadata, message: messageRules), generators: generators),
            response: response)
    }

    /// How the recorded `interaction` differs from this declaration, apart from its example
    /// request; empty when the contract file is up to date with the test.
    package func differences(from interaction: Interaction) -> [String] {
        var found: [String] = []
        if interaction.providerStates != providerStates {
            found.append(
                "provider states: the file has \(interaction.providerStates), the test declares \(providerStates)")
        }
        if interaction.request.path != path {
            found.append("path: the file has \(interaction.request.path), the test declares \(path)")
        }
        if interaction.request.streamsRequests != streamsRequests {
            found.append(
                "request: the file has \(interaction.request.streamsRequests ? "a stream of messages" : "one message"), "
                    + "the method takes \(streamsRequests ? "a stream" : "one"))")
        }
        if interaction.request.matchingRules.metadata != metadata
            || Set(interaction.request.metadata.keys) != Set(metadata.keys)
        {
            found.append(
                "metadata: the file names \(interaction.request.metadata.keys.sorted()), the test \(metadata.keys.sorted()) (or their matchers differ)")
        }
        if interaction.request.matchingRules.message != messageRules {
            found.append("request matchers differ")
        }
        if interaction.request.generators != generators {
            found.append("generators differ")
        }
        if interaction.response != response {
            found.append("response: the file expects \(Self.summary(interaction.response)), the test \(Self.summary(response))")
        }
        return found
    }

    private static func summary(_ response: ResponseExpectation) -> String {
        switch response {
        case .message(let message, let rules): "\(JSONText.compact(message, limit: 200)) with matchers \(rules.keys.sorted())"
        case .status(let code, let reason): "status \(code.name) \(reason ?? "")"
        case .stream(let stream):
            "\(stream.messages.count) messages \(stream.messages.map { JSONText.compact($0.message, limit: 80) }) "
                + "with matchers \(stream.messages.map { $0.rules.keys.sorted() }), then the stream \(stream.end)"
        }
    }
}

extension JSONValue {
    /// `value` as JSON, e.g. a contract message built from the `Contracts` types.
    package init(encoding value: some Encodable) throws {
        self = try JSONCodec.shared.decode(JSONValue.self, from: JSONCodec.shared.encode(value))
    }

    /// This value decoded as `type`, e.g. a provider state's parameters as a `Product`.
    package func decoded<Value: Decodable>(as type: Value.Type) throws -> Value {
        try JSONCodec.shared.decode(type, from: JSONCodec.shared.encode(self))
    }

    /// The members of an object; empty for anything else.
    package var objectMembers: [String: JSONValue] {
        if case .object(let members) = self { return members }
        return [:]
    }
}

extension ResponseExpectation {
    /// A response message built from a `Contracts` value.
    package static func message(encoding value: some Encodable, rules: [String: Matcher] = [:]) throws -> ResponseExpectation {
        .message(try JSONValue(encoding: value), rules: rules)
    }

    /// The status of `reason`, with the code it always travels with.
    package static func status(_ reason: some ErrorReason) -> ResponseExpectation {
        .status(code: reason.code, reason: reason.rawValue)
    }
}

extension ProviderState {
    /// A state whose parameters are the members of `value` encoded as JSON, e.g. a `Product`.
    package init(_ name: String, encoding value: some Encodable) throws {
        self.init(name, try JSONValue(encoding: value).objectMembers)
    }
}
