import ArgumentParser
import Contracts
import Foundation
import RPC
import JSON

/// `shopctl call METHOD [JSON|-]`: any method by name, like grpcurl — the JSON body as given,
/// every response message printed as it arrives.
struct CallCommand: AsyncParsableCommand {
    /// The command's name and help.
    static let configuration = CommandConfiguration(
        commandName: "call", abstract: "Call any method with a JSON body and print every response message.",
        discussion: """
            METHOD is any form `shopctl describe` prints: CatalogService/GetProduct, catalog.GetProduct, \
            shop.catalog.v1.CatalogService/GetProduct (a leading / is fine; case does not matter). A fully \
            qualified method this shopctl does not know is sent as given. The body is the JSON argument, \
            standard input for -, or {} when absent; client-streaming methods take a JSON array or JSON \
            lines, one message each. The stored access token is sent when there is one; the admin key \
            (--api-key or SHOP_ADMIN_API_KEY) goes to admin methods, and to any method when --api-key is \
            given. Streaming responses run without a deadline until they end or Ctrl-C.

            Examples:
              shopctl call CatalogService/GetProduct '{"id": 3}'
              shopctl call catalog.ListProducts '{"query": "tea", "pageSize": 5}'
              shopctl call CatalogService/DeleteProduct '{"id": 21}'
              shopctl call CatalogService/ImportProducts - < products.jsonl
            """)

    /// `--gateway`, `--json`, `--timeout`.
    @OptionGroup var global: GlobalOptions
    /// `--api-key` or `SHOP_ADMIN_API_KEY`.
    @OptionGroup var key: AdminKeyOptions
    /// The method.
    @Argument(help: "The method, e.g. CatalogService/GetProduct (see `shopctl describe`).") var method: String
    /// The body, or "-".
    @Argument(help: "The request as JSON, or - to read it from standard input (default {}).") var body: String?
    /// Extra metadata.
    @Option(name: .customShort("H"), help: "Extra metadata as key:value (repeatable).") var header: [String] = []

    /// Refuses bad values before anything is sent.
    func validate() throws {
        do {
            _ = try Self.resolve(method)
        } catch {
            throw ValidationError(error.message)
        }
        for entry in header where Self.metadataEntry(entry) == nil {
            throw ValidationError("-H takes key:value (got '\(entry)').")
        }
    }

    /// Makes the call and prints the answer.
    func run() async throws {
        let name = try Self.resolve(method)
        let info = KnownMethods.info(for: name)
        let kind = info?.kind ?? .unary
        let text = body == "-" ? String(decoding: ProcessContext.current.readStandardInput(), as: UTF8.self) : body ?? "{}"
        let requests = try Self.messages(from: text, kind: kind)
        var extra = Metadata()
        for entry in header {
            if let pair = Self.metadataEntry(entry) { extra.add(pair.0, pair.1) }
        }
        // The key goes where it is needed, or where the user sent it; -H x-api-key wins.
        if extra[MetadataKey.apiKey] == nil, info?.auth == .admin || key.given != nil, let apiKey = key.key {
            extra.set(MetadataKey.apiKey, apiKey)
        }
        let metadata = extra
        // An explicit authorization header wins over the stored session.
        let authorization: CallAuthorization = metadata[MetadataKey.authorization] == nil ? .optionalUser : .none
        let streams = !kind.isUnaryResponse
        let retry = info.map(CallRetry.standard(for:)) ?? .never
        try await global.withContext { context in
            let gateway = context.gateway
            let output = context.output
            let work: @Sendable () async throws -> Void = {
                try await gateway.call(
                    path: name.path, requests: requests, authorization: authorization, metadata: metadata, retry: retry,
                    timeout: streams ? nil : gateway.timeout
                ) { message in
                    output.message(message) { PrettyJSON.format(message) }
                }
            }
            if streams {
                _ = try await Interruption.run(work)
            } else {
                try await work()
            }
        }
    }

    /// The method `text` names (``APINames/method(_:in:)`` over the contract's methods); a fully
    /// qualified name of a service the contract does not know as given, for servers newer than
    /// this shopctl. A usage error listing the close matches otherwise.
    static func resolve(_ text: String) throws(ShopctlError) -> MethodName {
        let known = KnownMethods.all.map { APINames.Method(service: $0.service, method: $0.method) }
        switch APINames.method(text, in: known) {
        case .found(let method):
            return MethodName(service: method.service, method: method.method)
        case .ambiguous(let candidates):
            throw .usage(
                "METHOD '\(text)' could be \(candidates.map(\.shortName).joined(separator: " or ")); give the service too.",
                hint: "see `shopctl describe`")
        case .unknown(let close):
            let name = MethodName(text)
            if let name, name.service.contains("."),
                APINames.services(matching: name.service, in: Array(Set(known.map(\.service)))).isEmpty
            {
                return name
            }
            let suggestion = close.isEmpty ? "" : " Did you mean \(close.map(\.shortName).joined(separator: ", "))?"
            let shape = name == nil ? " METHOD is service/method, e.g. CatalogService/GetProduct." : ""
            throw .usage("No method matches '\(text)'.\(suggestion)\(shape)", hint: "see `shopctl describe`")
        }
    }

    /// The request messages of `text`: the text itself for methods that take one message; for
    /// client- and bidirectional streaming, each element of a JSON array or each non-blank line.
    static func messages(from text: String, kind: MethodKind) throws(ShopctlError) -> [Data] {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if kind.isUnaryRequest { return [Data((trimmed.isEmpty ? "{}" : trimmed).utf8)] }
        if trimmed.hasPrefix("[") {
            do {
                let elements = try JSONCodec.shared.decode([JSONValue].self, from: Data(trimmed.utf8))
                return try elements.map { element throws(RPCError) in try JSONCodec.shared.encode(element) }
            } catch {
                throw .usage("The body is not a JSON array: \(error.message)")
            }
        }
        return trimmed.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            .map { Data($0.utf8) }
    }

    /// `key:value` split at the first colon, the key lower-cased and both trimmed; nil without a key.
    static func metadataEntry(_ text: String) -> (String, String)? {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let key = text[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
        let value = text[text.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        return key.isEmpty ? nil : (key, value)
    }
}

/// A method name as typed, split into its service part and its method: `service/method`,
/// `/service/method` or `service.method`; ``APINames`` finds what the parts name.
struct MethodName: Sendable, Equatable {
    /// The fully qualified service, e.g. `shop.catalog.v1.CatalogService`.
    let service: String
    /// The method, e.g. `GetProduct`.
    let method: String

    /// A method of `service`.
    init(service: String, method: String) {
        self.service = service
        self.method = method
    }

    /// Parses `text`; nil when it does not name a service and a method.
    init?(_ text: String) {
        var body = Substring(text.trimmingCharacters(in: .whitespaces))
        if body.first == "/" { body = body.dropFirst() }
        let parts: [Substring]
        if body.contains("/") {
            parts = body.split(separator: "/", omittingEmptySubsequences: false)
        } else if let dot = body.lastIndex(of: ".") {
            parts = [body[..<dot], body[body.index(after: dot)...]]
        } else {
            return nil
        }
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty, !parts[1].contains(".") else { return nil }
        service = String(parts[0])
        method = String(parts[1])
    }

    /// The HTTP/2 `:path`.
    var path: String { "/\(service)/\(method)" }
}

/// Every method `Contracts` declares, for the streaming kind and auth level of a method that
/// `call` names.
enum KnownMethods {
    /// Each service's methods, plus health and Describe (``APIDescription/allMethods``).
    static let all: [MethodInfo] = APIDescription.allMethods

    /// The method `name` names; nil for one `Contracts` does not know (then called as unary).
    static func info(for name: MethodName) -> MethodInfo? {
        all.first { $0.service == name.service && $0.method == name.method }
    }
}
