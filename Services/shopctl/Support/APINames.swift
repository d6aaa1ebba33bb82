import Contracts
import Foundation

/// How shopctl finds a service, a method or a message from the name a person typed — the one
/// set of rules behind both `describe` and `call`, so a name one prints the other takes.
///
/// A service is named by its full name (`shop.catalog.v1.CatalogService`), its last part
/// (`CatalogService`) or a piece of it (`catalog`), ignoring case. A method is a service so
/// named and a method name, joined by `/` or `.`, optionally after a `/`:
/// `/shop.catalog.v1.CatalogService/GetProduct`, `CatalogService/GetProduct`, `catalog.GetProduct`.
/// A message is named by its type name, ignoring case (`Product`, `listproductsrequest`).
enum APINames {
    /// A method as a service and a method name.
    struct Method: Sendable, Hashable {
        /// The fully qualified service, e.g. `shop.catalog.v1.CatalogService`.
        var service: String
        /// The method, e.g. `GetProduct`.
        var method: String

        /// The short form `describe` prints and `call` takes: `CatalogService/GetProduct`.
        var shortName: String { "\(APINames.lastPart(of: service))/\(method)" }
        /// The HTTP/2 `:path`.
        var path: String { "/\(service)/\(method)" }
    }

    /// What a typed name resolved to.
    enum Lookup<Candidate: Sendable & Hashable>: Sendable, Hashable {
        /// Exactly one candidate.
        case found(Candidate)
        /// Several candidates, none preferred.
        case ambiguous([Candidate])
        /// None; the close matches, perhaps none, for a "did you mean".
        case unknown(closeMatches: [Candidate])
    }

    /// The most close matches an error lists.
    static let maximumSuggestions = 5

    /// The services of `names` that `query` names: the one with that full name; else those whose
    /// last part equals it, ignoring case; else those whose name contains it, ignoring case.
    static func services(matching query: String, in names: [String]) -> [String] {
        let query = query.trimmingCharacters(in: .whitespaces)
        if names.contains(query) { return [query] }
        let lowered = query.lowercased()
        let byLastPart = names.filter { lastPart(of: $0).lowercased() == lowered }
        if !byLastPart.isEmpty { return byLastPart }
        return lowered.isEmpty ? [] : names.filter { $0.lowercased().contains(lowered) }
    }

    /// The method of `methods` that `text` names, in any of the forms above; the method name's
    /// case is ignored too.
    static func method(_ text: String, in methods: [Method]) -> Lookup<Method> {
        guard let name = MethodName(text) else { return .unknown(closeMatches: closeMethods(to: text, in: methods)) }
        let services = Set(self.services(matching: name.service, in: Array(Set(methods.map(\.service)))))
        let matches = methods.filter { services.contains($0.service) && $0.method.lowercased() == name.method.lowercased() }
        switch matches.count {
        case 1: return .found(matches[0])
        case 0: return .unknown(closeMatches: closeMethods(to: name.method, in: methods, preferring: services))
        default: return .ambiguous(matches)
        }
    }

    /// The message of `names` that `query` names, ignoring case; close matches otherwise.
    static func message(_ query: String, in names: [String]) -> Lookup<String> {
        let lowered = query.trimmingCharacters(in: .whitespaces).lowercased()
        if let exact = names.first(where: { $0.lowercased() == lowered }) { return .found(exact) }
        return .unknown(closeMatches: closeWords(to: lowered, in: names))
    }

    /// The last dot-separated part of a service name: `CatalogService`.
    static func lastPart(of service: String) -> String {
        service.split(separator: ".").last.map(String.init) ?? service
    }

    /// Methods close to `typed` (a method name, or whatever was typed): those of `services`
    /// whose name is a near miss first, then any method with exactly that name in another service.
    private static func closeMethods(to typed: String, in methods: [Method], preferring services: Set<String> = []) -> [Method] {
        let word = typed.split(whereSeparator: { $0 == "/" || $0 == "." }).last.map(String.init) ?? typed
        let near = Set(closeWords(to: word.lowercased(), in: methods.map(\.method), limit: .max))
        let inService = methods.filter { services.contains($0.service) && near.contains($0.method) }
        let elsewhere = methods.filter { !services.contains($0.service) && $0.method.lowercased() == word.lowercased() }
        let nearAnywhere = services.isEmpty ? methods.filter { near.contains($0.method) } : []
        var seen = Set<Method>()
        return Array((inService + elsewhere + nearAnywhere).filter { seen.insert($0).inserted }.prefix(maximumSuggestions))
    }

    /// The words of `candidates` within a typo of `typed` (``ClosestMatch``), closest first, then
    /// those containing it; `typed` is lower-cased.
    private static func closeWords(to typed: String, in candidates: [String], limit: Int = maximumSuggestions) -> [String] {
        let near = ClosestMatch.all(for: typed, among: candidates)
        let nearSet = Set(near)
        let containing = typed.count >= 3 ? candidates.filter { $0.lowercased().contains(typed) && !nearSet.contains($0) } : []
        return Array((near + containing).prefix(limit))
    }
}
