internal import Foundation
package import RPC
package import RPCHTTP2

/// Builds and sends the request of an interaction on the provider side.
package enum RequestReplay {
    /// The metadata and message to send: the contract's examples with the generators'
    /// templates filled from `values`.
    package static func request(
        for expectation: RequestExpectation, values: [String: JSONValue]
    ) throws(ContractError) -> (Metadata, JSONValue) {
        var metadata = Metadata()
        for (name, value) in expectation.metadata.sorted(by: { $0.key < $1.key }) { metadata.set(name, value) }
        for (name, template) in expectation.generators.metadata.sorted(by: { $0.key < $1.key }) {
            metadata.set(name, try fill(template, from: values, for: "metadata '\(name)'").text)
        }
        var message = expectation.message
        for (pathText, template) in expectation.generators.message.sorted(by: { $0.key < $1.key }) {
            guard let path = JSONPath(parsing: pathText), path.wildcardCount == 0 else {
                throw ContractError("the generator path '\(pathText)' must name one value ($.a.b, $.list[0])")
            }
            let value = try fill(template, from: values, for: pathText)
            guard let replaced = message.setting(value.json, at: path) else {
                throw ContractError("the generator path '\(pathText)' is not in the request message")
            }
            message = replaced
        }
        return (metadata, message)
    }

    /// Sends one request message and reads the outcome over a fresh client of `address`.
    package static func send(
        path: String, metadata: Metadata, message: JSONValue, to address: SocketAddressText,
        timeout: Duration = .seconds(10)
    ) async -> CallOutcome {
        let client: RPCClient
        do {
            client = try RPCClient(target: address)
        } catch {
            return .failure(code: .unavailable, reason: nil, message: "cannot create a client: \(error)")
        }
        let outcome: CallOutcome
        do {
            let payload = try JSONCodec.shared.encode(message)
            let messages = try await client.withCall(path: path, options: CallOptions(metadata: metadata, timeout: timeout)) {
                call in
                try await call.send(payload)
                call.finishSending()
                var messages: [JSONValue] = []
                while let data = try await call.nextMessage() {
                    messages.append(try JSONCodec.shared.decode(JSONValue.self, from: data))
                }
                return messages
            }
            outcome = .messages(messages)
        } catch {
            let rpcError = RPCError(converting: error)
            outcome = .failure(code: rpcError.code, reason: rpcError.reason, message: rpcError.message)
        }
        await client.close()
        return outcome
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
