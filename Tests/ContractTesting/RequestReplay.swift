internal import Foundation
package import RPC
import RPCHTTP2
package import JSON
import Contracts
import StorefrontKit

/// Builds and sends the request of an interaction on the provider side.
package enum RequestReplay {
    /// The metadata and messages to send: the contract's examples with the generators'
    /// templates filled from `values` (message generators apply to every message of a stream).
    package static func request(
        for expectation: RequestExpectation, values: [String: JSONValue]
    ) throws(ContractError) -> (Metadata, [JSONValue]) {
        var metadata = Metadata()
        for (name, value) in expectation.metadata.sorted(by: { $0.key < $1.key }) { metadata.set(name, value) }
        for (name, template) in expectation.generators.metadata.sorted(by: { $0.key < $1.key }) {
            metadata.set(name, try fill(template, from: values, for: "metadata '\(name)'").text)
        }
        var messages = expectation.messages
        for (pathText, template) in expectation.generators.message.sorted(by: { $0.key < $1.key }) {
            guard let path = JSONPath(parsing: pathText), path.wildcardCount == 0 else {
                throw ContractError("the generator path '\(pathText)' must name one value ($.a.b, $.list[0])")
            }
            let value = try fill(template, from: values, for: pathText)
            for index in messages.indices {
                guard let replaced = messages[index].setting(value.json, at: path) else {
                    throw ContractError("the generator path '\(pathText)' is not in the request message")
                }
                messages[index] = replaced
            }
        }
        return (metadata, messages)
    }

    /// Sends one request message and reads the outcome over a fresh client of `address`.
    package static func send(
        path: String, metadata: Metadata, message: JSONValue, to address: SocketAddressText, over wire: ContractWire = .grpc,
        timeout: Duration = .seconds(10)
    ) async -> CallOutcome {
        await send(path: path, metadata: metadata, messages: [message], to: address, over: wire, timeout: timeout)
    }

    /// Sends `messages` (one, or a client stream), half-closes, and reads every response
    /// message and the status over a fresh client of `address` speaking `wire`.
    package static func send(
        path: String, metadata: Metadata, messages: [JSONValue], to address: SocketAddressText, over wire: ContractWire = .grpc,
        timeout: Duration = .seconds(10)
    ) async -> CallOutcome {
        await withClient(of: address, over: wire) { client in
            let payloads = try messages.map { message throws(RPCError) in try JSONCodec.shared.encode(message) }
            let received = try await client.withCall(path: path, options: CallOptions(metadata: metadata, timeout: timeout)) {
                call in
                for payload in payloads { try await call.send(payload) }
                call.finishSending()
                var received: [JSONValue] = []
                while let data = try await call.nextMessage() {
                    received.append(try JSONCodec.shared.decode(JSONValue.self, from: data))
                }
                return received
            }
            return .messages(received)
        }
    }

    /// Sends `messages` and reads the response stream `stream` describes, over a fresh client
    /// of `address` speaking `wire`: before reading a message that comes only after something happens, runs
    /// `prepare` with that message's state (a mid-stream provider state); after the listed
    /// messages cancels a stream that stays open (a watch), or reads any other to its end.
    ///
    /// - Throws: what `prepare` threw, as a ``ContractError``; the call's own failures are
    ///   the outcome.
    package static func stream(
        path: String, metadata: Metadata, messages: [JSONValue], expecting stream: StreamExpectation,
        to address: SocketAddressText, over wire: ContractWire = .grpc, timeout: Duration = .seconds(10),
        prepare: (ProviderState) async throws -> Void
    ) async throws -> CallOutcome {
        var preparationFailure: ContractError?
        let outcome = await withClient(of: address, over: wire) { client in
            let payloads = try messages.map { message throws(RPCError) in try JSONCodec.shared.encode(message) }
            var received: [JSONValue] = []
            let stillOpen = try await client.withCall(path: path, options: CallOptions(metadata: metadata, timeout: timeout)) {
                call in
                for payload in payloads { try await call.send(payload) }
                call.finishSending()
                for expected in stream.messages {
                    if let state = expected.after {
                        do {
                            try await prepare(state)
                        } catch {
                            preparationFailure = ContractError("setting up \(state) mid-stream failed: \(error)")
                            call.cancel()
                            return false
                        }
                    }
                    guard let data = try await call.nextMessage() else { return false }
                    received.append(try JSONCodec.shared.decode(JSONValue.self, from: data))
                }
                if stream.end == .open {
                    call.cancel()
                    return true
                }
                while let data = try await call.nextMessage() {
                    received.append(try JSONCodec.shared.decode(JSONValue.self, from: data))
                }
                return false
            }
            return stillOpen ? .openStream(received) : .messages(received)
        }
        if let preparationFailure { throw preparationFailure }
        return outcome
    }

    /// Runs `body` with a fresh client of `address` speaking `wire`, closes it, and turns a
    /// thrown error into the failed outcome it stands for.
    private static func withClient(
        of address: SocketAddressText, over wire: ContractWire, _ body: (RPCClient) async throws -> CallOutcome
    ) async -> CallOutcome {
        let client: RPCClient
        do {
            client = try makeClient(of: address, over: wire)
        } catch {
            return .failure(code: .unavailable, reason: nil, message: "cannot create a client: \(error)")
        }
        let outcome: CallOutcome
        do {
            outcome = try await body(client)
        } catch {
            let rpcError = RPCError(converting: error)
            outcome = .failure(code: rpcError.code, reason: rpcError.reason, message: rpcError.message)
        }
        await client.close()
        return outcome
    }

    /// A client of `address`: gRPC over HTTP/2, or Connect over HTTP/1.1 with StorefrontKit's
    /// own transport — the request goes out exactly as the consumer sends it.
    private static func makeClient(of address: SocketAddressText, over wire: ContractWire) throws -> RPCClient {
        switch wire {
        case .grpc:
            return try RPCClient(target: address)
        case .connect:
            guard let baseURL = URL(string: "http://\(address)") else {
                throw ContractError("\(address) makes no URL")
            }
            return RPCClient(transport: ConnectTransport(baseURL: baseURL, methods: APIDescription.allMethods))
        }
    }

    /// `template` with each `${name}` replaced: a template that is exactly one placeholder
    /// keeps the value's JSON type.
    private static func fill(
        _ template: String, from values: [String: JSONValue], for target: String
    ) throws(ContractError) -> (text: String, json: JSONValue) {
        var text = ""
        var rest = Substring(template)
        var single: JSONValue?
        while let start = rest.range(of: "${") {
            text += rest[..<start.lowerBound]
            guard let end = rest[start.upperBound...].firstIndex(of: "}") else {
                throw ContractError("the template \(template) for \(target) has an unclosed ${")
            }
            let name = String(rest[start.upperBound..<end])
            guard let value = values[name] else {
                throw ContractError(
                    "the generator for \(target) needs ${\(name)}, which neither the provider nor its states provide "
                        + "(have: \(values.keys.sorted().joined(separator: ", ")))")
            }
            if template == "${\(name)}" { single = value }
            text += value.templateText
            rest = rest[rest.index(after: end)...]
        }
        text += rest
        return (text, single ?? .string(text))
    }
}

extension JSONValue {
    /// The value as a template inserts it: strings bare, whole numbers without a fraction.
    var templateText: String {
        switch self {
        case .string(let text): text
        case .number(let number) where number.rounded() == number && abs(number) < 9.0e15: String(Int64(number))
        default: JSONText.compact(self, limit: .max)
        }
    }

    /// This value with the value at `path` (concrete) replaced by `value`; nil when `path` is not in it.
    package func setting(_ value: JSONValue, at path: JSONPath) -> JSONValue? {
        guard let first = path.segments.first else { return value }
        let rest = JSONPath(segments: Array(path.segments.dropFirst()))
        switch (self, first) {
        case (.object(var members), .key(let key)):
            guard let member = members[key] ?? (rest.segments.isEmpty ? .null : nil),
                let replaced = member.setting(value, at: rest)
            else { return nil }
            members[key] = replaced
            return .object(members)
        case (.array(var elements), .index(let index)) where elements.indices.contains(index):
            guard let replaced = elements[index].setting(value, at: rest) else { return nil }
            elements[index] = replaced
            return .array(elements)
        default:
            return nil
        }
    }
}
