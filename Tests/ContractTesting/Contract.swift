package import RPC
package import JSON

/// What one consumer expects of one provider: the JSON file `Tests/Contracts/<consumer>/<provider>.json`.
///
/// Consumer tests write it (record mode) and check their client code against it; provider
/// tests replay each interaction against the real provider. Keys are written sorted and
/// interactions by description, so a change shows as a small, reviewable diff.
package struct Contract: Codable, Sendable, Hashable {
    /// The calling service, e.g. `basket-svc`.
    package var consumer: String
    /// The called service, e.g. `catalog-svc`.
    package var provider: String
    /// The calls the consumer makes, sorted by description.
    package var interactions: [Interaction]
    /// The file format, so that a reader can refuse one it does not know.
    package var format: String
    /// How the consumer's calls travel, so that the provider replay sends them the same way.
    package var wire: ContractWire

    /// The format this code reads and writes.
    package static let currentFormat = "storefront-contract/1"

    /// Creates a contract; interactions are sorted by description.
    package init(consumer: String, provider: String, interactions: [Interaction], wire: ContractWire = .grpc) {
        self.consumer = consumer
        self.provider = provider
        self.interactions = interactions.sorted { $0.description < $1.description }
        self.format = Self.currentFormat
        self.wire = wire
    }

    private enum CodingKeys: String, CodingKey {
        case consumer, provider, interactions, format, wire
    }

    /// Reads a contract; without `wire` the consumer speaks gRPC (every file before Connect
    /// consumers).
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        consumer = try container.decode(String.self, forKey: .consumer)
        provider = try container.decode(String.self, forKey: .provider)
        interactions = try container.decode([Interaction].self, forKey: .interactions)
        format = try container.decode(String.self, forKey: .format)
        wire = try container.decodeIfPresent(ContractWire.self, forKey: .wire) ?? .grpc
    }

    /// Writes `wire` only for a consumer that does not speak gRPC, so gRPC files stay as they were.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(consumer, forKey: .consumer)
        try container.encode(provider, forKey: .provider)
        try container.encode(interactions, forKey: .interactions)
        try container.encode(format, forKey: .format)
        if wire != .grpc { try container.encode(wire, forKey: .wire) }
    }

    /// The interaction described by `description`, if any.
    package func interaction(_ description: String) -> Interaction? {
        interactions.first { $0.description == description }
    }
}

/// How a consumer's calls reach the provider, written as a contract's `wire`: the provider
/// replay sends them the same way.
package enum ContractWire: String, Codable, Sendable, Hashable {
    /// gRPC with JSON over HTTP/2 (the services and shopctl); the default, not written.
    case grpc
    /// Connect with JSON over HTTP/1.1 (API.md §9): StorefrontKit, an app's client library.
    case connect
}

/// One call: the state the provider must be in, what the consumer sends, and what it expects back.
package struct Interaction: Codable, Sendable, Hashable {
    /// What the call is for, unique within its contract, e.g. "GetProduct of a product the catalog has".
    package var description: String
    /// What must be true on the provider before the call; set up by provider state hooks.
    package var providerStates: [ProviderState]
    /// What the consumer sends.
    package var request: RequestExpectation
    /// What the consumer expects back.
    package var response: ResponseExpectation

    /// Creates an interaction.
    package init(
        description: String, providerStates: [ProviderState], request: RequestExpectation,
        response: ResponseExpectation
    ) {
        self.description = description
        self.providerStates = providerStates
        self.request = request
        self.response = response
    }
}

/// A named precondition with parameters, e.g. "a product exists" `{"id": 7, …}`.
package struct ProviderState: Codable, Sendable, Hashable, CustomStringConvertible {
    /// The name the provider's state hook is registered under.
    package var name: String
    /// The hook's parameters.
    package var params: [String: JSONValue]

    /// Creates a state.
    package init(_ name: String, _ params: [String: JSONValue] = [:]) {
        self.name = name
        self.params = params
    }

/// The name, and the parameters as compact JSON.
    package var description: String {
        params.isEmpty ? "\"\(name)\"" : "\"\(name)\" \(JSONText.compact(.object(params)))"
    }
}

/// The request side of an interaction: method path, metadata and message (or, for a
/// client-streaming method, the messages in order), each with its matching rules, and the
/// values the provider side fills in from its states.
package struct RequestExpectation: Codable, Sendable, Hashable {
    /// The HTTP/2 `:path`, `/<service>/<method>`.
    package var path: String
    /// The metadata the consumer sends that the contract cares about, with example values.
    /// Other metadata is not part of the contract.
    package var metadata: [String: String]
    /// The example request messages in order: exactly one, unless ``streamsRequests``.
    package var messages: [JSONValue]
    /// Whether the consumer sends a stream of messages (a client-streaming method), written as
    /// `messages`; otherwise its one message is written as `message`.
    package var streamsRequests: Bool
    /// How actual metadata and messages are compared with the examples; the message rules
    /// apply to each message of a stream.
    package var matchingRules: RequestMatchingRules
    /// Values the provider replay takes from its provider states rather than from the example.
    package var generators: Generators

    /// Creates the expectation of a call with one request message.
    package init(
        path: String, metadata: [String: String], message: JSONValue, matchingRules: RequestMatchingRules,
        generators: Generators
    ) {
        self.init(
            path: path, metadata: metadata, messages: [message], streamsRequests: false, matchingRules: matchingRules,
            generators: generators)
    }

    /// Creates an expectation; `streamsRequests` says whether `messages` are a client stream.
    package init(
        path: String, metadata: [String: String], messages: [JSONValue], streamsRequests: Bool,
        matchingRules: RequestMatchingRules, generators: Generators
    ) {
        self.path = path
        self.metadata = metadata
        self.messages = messages
        self.streamsRequests = streamsRequests
        self.matchingRules = matchingRules
        self.generators = generators
    }

    /// The example request message; the first of a stream.
    package var message: JSONValue { messages.first ?? .object([:]) }

    private enum CodingKeys: String, CodingKey {
        case path, metadata, message, messages, matchingRules, generators
    }

    /// Reads an expectation: `message`, or a client stream's `messages`; absent metadata,
    /// rules and generators are empty.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        path = try container.decode(String.self, forKey: .path)
        metadata = try container.decodeIfPresent([String: String].self, forKey: .metadata) ?? [:]
        if let stream = try container.decodeIfPresent([JSONValue].self, forKey: .messages) {
            messages = stream
            streamsRequests = true
        } else {
            messages = [try container.decode(JSONValue.self, forKey: .message)]
            streamsRequests = false
        }
        matchingRules = try container.decodeIfPresent(RequestMatchingRules.self, forKey: .matchingRules) ?? RequestMatchingRules()
        generators = try container.decodeIfPresent(Generators.self, forKey: .generators) ?? Generators()
    }

    /// Leaves out what is empty, so that files show only what an interaction says.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(path, forKey: .path)
        if !metadata.isEmpty { try container.encode(metadata, forKey: .metadata) }
        if streamsRequests {
            try container.encode(messages, forKey: .messages)
        } else {
            try container.encode(message, forKey: .message)
        }
        if !matchingRules.isEmpty { try container.encode(matchingRules, forKey: .matchingRules) }
        if !generators.isEmpty { try container.encode(generators, forKey: .generators) }
    }
}

/// Values for the two parts of a request — its metadata, by name, and its message, by JSON
/// path — as contract files write them: `{"metadata": {…}, "message": {…}}`, an empty half
/// left out. ``RequestMatchingRules`` holds matchers in it, ``Generators`` templates.
package struct MetadataAndMessage<Value: Codable & Sendable & Hashable>: Codable, Sendable, Hashable {
    /// Values for metadata, by metadata name.
    package var metadata: [String: Value]
    /// Values for the message, by JSON path (`$.items[*].count`).
    package var message: [String: Value]

    /// Creates the two halves.
    package init(metadata: [String: Value] = [:], message: [String: Value] = [:]) {
        self.metadata = metadata
        self.message = message
    }

    /// Whether there are none.
    package var isEmpty: Bool { metadata.isEmpty && message.isEmpty }

    private enum CodingKeys: String, CodingKey {
        case metadata, message
    }

    /// Reads both halves; an absent half is empty.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        metadata = try container.decodeIfPresent([String: Value].self, forKey: .metadata) ?? [:]
        message = try container.decodeIfPresent([String: Value].self, forKey: .message) ?? [:]
    }

    /// Leaves out an empty half.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        if !metadata.isEmpty { try container.encode(metadata, forKey: .metadata) }
        if !message.isEmpty { try container.encode(message, forKey: .message) }
    }
}

/// The matchers of a request: metadata by name (a name without one is compared by equality),
/// message by JSON path (the default is equality, with no extra fields).
package typealias RequestMatchingRules = MetadataAndMessage<Matcher>

/// Values the provider side computes at replay time, as `${name}` templates over the values
/// the provider and its state hooks return (Pact's provider-state generators): an access
/// token minted for the state's user (`"authorization": "Bearer ${accessToken}"`), the
/// provider's own internal key. A message template that is exactly `${name}` takes the value
/// as it is (a number stays a number).
package typealias Generators = MetadataAndMessage<String>

/// What the consumer expects back: a response message compared through matchers, a status
/// code with its reason, or — for a server-streaming method — a sequence of messages and how
/// the stream ends.
package enum ResponseExpectation: Codable, Sendable, Hashable {
    /// One response message; `rules` are matchers by JSON path (default: equality, no extra fields).
    case message(JSONValue, rules: [String: Matcher])
    /// A failed call with this code and, when given, the `shop-error-reason`.
    case status(code: RPCCode, reason: String?)
    /// Response messages in order, then the stream's end.
    case stream(StreamExpectation)

    private enum CodingKeys: String, CodingKey {
        case message, matchingRules, status, messages
    }

    /// Reads `{"messages", …}` (a stream), `{"status": {"code", "reason"}}` or `{"message", "matchingRules"}`.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if container.contains(.messages) {
            self = .stream(try StreamExpectation(from: decoder))
        } else if let status = try container.decodeIfPresent(StatusText.self, forKey: .status) {
            let (code, reason) = try status.decoded()
            self = .status(code: code, reason: reason)
        } else {
            self = .message(
                try container.decode(JSONValue.self, forKey: .message),
                rules: try container.decodeIfPresent([String: Matcher].self, forKey: .matchingRules) ?? [:])
        }
    }

    /// Writes the form ``init(from:)`` reads, the code by its name.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .message(let message, let rules):
            try container.encode(message, forKey: .message)
            try container.encode(rules, forKey: .matchingRules)
        case .status(let code, let reason):
            try container.encode(StatusText(code: code.name, reason: reason), forKey: .status)
        case .stream(let stream):
            try stream.encode(to: encoder)
        }
    }
}

/// A status as contract files write it: `{"code": "NOT_FOUND", "reason": "PRODUCT_NOT_FOUND"}`.
struct StatusText: Codable {
    /// The code's name.
    var code: String
    /// The `shop-error-reason`, when the contract names one.
    var reason: String?

    /// The code and reason; throws for a name that is no gRPC status code.
    func decoded() throws -> (RPCCode, String?) {
        guard let rpcCode = RPCCode(name: code) else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(codingPath: [], debugDescription: "\(code) is not a gRPC status code name"))
        }
        return (rpcCode, reason)
    }
}
