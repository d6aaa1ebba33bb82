package import Contracts
internal import RPC

/// One change between two API descriptions that breaks clients written against the old one.
package struct BreakingChange: Sendable, Hashable, CustomStringConvertible {
    /// Where: `shop.catalog.v1.CatalogService/GetProduct response`, `message Product`…
    package var location: String
    /// What changed, e.g. `field "title" removed (or renamed: new fields name)`.
    package var change: String

    /// Creates a breaking change.
    package init(_ location: String, _ change: String) {
        self.location = location
        self.change = change
    }

    /// `location: change`.
    package var description: String { "\(location): \(change)" }
}

/// The differences between an API snapshot and the API now.
package struct APIChanges: Sendable, Hashable {
    /// What breaks existing clients.
    package var breaking: [BreakingChange] = []
    /// What only adds: new services, methods, messages, optional fields, required response fields.
    package var additions: [String] = []

    /// Whether nothing changed at all.
    package var isEmpty: Bool { breaking.isEmpty && additions.isEmpty }
}

/// A breaking-change check in the manner of `buf breaking`, for our JSON messages: compares
/// two ``APIDescription``s and sorts each difference into breaking or additive.
///
/// Breaking: a service or method removed (or renamed), a method's kind changed, its auth
/// level tightened, it stopped being idempotent; a field removed (or renamed) or its type
/// changed; a request field made required or added as required; a response field made
/// optional. Where a message is used in requests and responses both, both rules hold.
package enum APICompatibility {
    /// Which way a message travels.
    private struct Directions {
        var request = false
        var response = false
    }

    /// The changes from `old` to `new`.
    package static func changes(from old: APIDescription, to new: APIDescription) -> APIChanges {
        var changes = APIChanges()
        let oldServices = Dictionary(uniqueKeysWithValues: old.services.map { ($0.name, $0) })
        let newServices = Dictionary(uniqueKeysWithValues: new.services.map { ($0.name, $0) })
        for service in old.services {
            guard let current = newServices[service.name] else {
                changes.breaking.append(BreakingChange("service \(service.name)", "removed (or renamed), with every method"))
                continue
            }
            compare(service, current, into: &changes)
        }
        for service in new.services where oldServices[service.name] == nil {
            changes.additions.append("service \(service.name) added")
        }

        let oldMessages = Dictionary(uniqueKeysWithValues: old.messages.map { ($0.name, $0) })
        let newMessages = Dictionary(uniqueKeysWithValues: new.messages.map { ($0.name, $0) })
        let oldDirections = directions(of: old)
        let newDirections = directions(of: new)
        for message in old.messages {
            guard let current = newMessages[message.name] else {
                changes.breaking.append(BreakingChange("message \(message.name)", "removed (or renamed)"))
                continue
            }
            let used = Directions(
                request: (oldDirections[message.name]?.request ?? false) || (newDirections[message.name]?.request ?? false),
                response: (oldDirections[message.name]?.response ?? false) || (newDirections[message.name]?.response ?? false))
            compareFields(message.fields, current.fields, used: used, at: "message \(message.name)", into: &changes)
        }
        for message in new.messages where oldMessages[message.name] == nil {
            changes.additions.append("message \(message.name) added")
        }
        return changes
    }

    private static func compare(_ old: APIDescription.Service, _ new: APIDescription.Service, into changes: inout APIChanges) {
        let newMethods = Dictionary(uniqueKeysWithValues: new.methods.map { ($0.name, $0) })
        let oldNames = Set(old.methods.map(\.name))
        let added = new.methods.filter { !oldNames.contains($0.name) }
        for method in old.methods {
            let location = "\(old.name)/\(method.name)"
            guard let current = newMethods[method.name] else {
                let twins = added.filter {
                    $0.kind == method.kind && $0.request == method.request && $0.response == method.response
                }
                let hint = twins.isEmpty ? "" : " — renamed to \(twins.map(\.name).joined(separator: " or "))?"
                changes.breaking.append(BreakingChange(location, "method removed (or renamed)\(hint)"))
                continue
            }
            if current.kind != method.kind {
                changes.breaking.append(
                    BreakingChange(location, "kind changed from \(method.kind.rawValue) to \(current.kind.rawValue)"))
            }
            if !isLoosening(from: method.auth, to: current.auth) {
                changes.breaking.append(
                    BreakingChange(location, "auth changed from \(method.auth.rawValue) to \(current.auth.rawValue)"))
            }
            if method.idempotent, !current.idempotent {
                changes.breaking.append(
                    BreakingChange(location, "no longer idempotent: clients retry it after UNAVAILABLE and would repeat it"))
            }
            compareFields(
                method.request, current.request, used: Directions(request: true), at: "\(location) request", into: &changes)
            compareFields(
                method.response, current.response, used: Directions(response: true), at: "\(location) response",
                into: &changes)
        }
        for method in added { changes.additions.append("\(new.name)/\(method.name) added") }
    }

    /// Whether moving a method from `old` to `new` auth keeps every old caller able to call it.
    private static func isLoosening(from old: AuthLevel, to new: AuthLevel) -> Bool {
        old == new || new == .none || (new == .optionalUser && old == .user)
    }

    private static func compareFields(
        _ old: [FieldDescriptor], _ new: [FieldDescriptor], used: Directions, at location: String,
        into changes: inout APIChanges
    ) {
        let newFields = Dictionary(uniqueKeysWithValues: new.map { ($0.name, $0) })
        let oldNames = Set(old.map(\.name))
        let added = new.filter { !oldNames.contains($0.name) }
        for field in old {
            guard let current = newFields[field.name] else {
                let twins = added.filter { $0.type == field.type }.map(\.name)
                let hint = twins.isEmpty ? "" : " — renamed to \(twins.joined(separator: " or "))?"
                changes.breaking.append(BreakingChange(location, "field \"\(field.name)\" removed (or renamed)\(hint)"))
                continue
            }
            if current.type != field.type {
                changes.breaking.append(
                    BreakingChange(location, "field \"\(field.name)\" changed type from \(field.type) to \(current.type)"))
            }
            if used.request, field.optional, !current.optional {
                changes.breaking.append(
                    BreakingChange(
                        location, "field \"\(field.name)\" changed from optional to required: old requests leave it out"))
            }
            if used.response, !field.optional, current.optional {
                changes.breaking.append(
                    BreakingChange(
                        location, "field \"\(field.name)\" changed from required to optional: clients expect it in every response"))
            }
        }
        for field in added {
            if used.request, !field.optional {
                changes.breaking.append(
                    BreakingChange(
                        location, "new required field \"\(field.name)\" (\(field.type)): old requests do not send it"))
            } else {
                changes.additions.append(
                    "\(location): field \"\(field.name)\" (\(field.type)\(field.optional ? ", optional" : "")) added")
            }
        }
    }

    /// For each message, whether it travels in requests, responses or both, through any chain of fields.
    private static func directions(of description: APIDescription) -> [String: Directions] {
        let messages = Dictionary(uniqueKeysWithValues: description.messages.map { ($0.name, $0.fields) })
        var found: [String: Directions] = [:]
        func visit(_ fields: [FieldDescriptor], request: Bool) {
            for field in fields {
                let name = APIDescription.elementType(of: field.type)
                guard let nested = messages[name] else { continue }
                var directions = found[name] ?? Directions()
                let seen = request ? directions.request : directions.response
                guard !seen else { continue }
                if request { directions.request = true } else { directions.response = true }
                found[name] = directions
                visit(nested, request: request)
            }
        }
        for method in description.services.flatMap(\.methods) {
            visit(method.request, request: true)
            visit(method.response, request: false)
        }
        return found
    }
}
