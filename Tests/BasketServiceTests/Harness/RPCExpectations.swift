import Contracts
import Foundation
import RPC
import Testing

/// Expects `body` to fail with an `RPCError` of `code` and, when given, `reason`; records an
/// issue otherwise. Returns the error, for further checks.
@discardableResult
func expectFailure<Value>(
    _ code: RPCCode, reason: String?, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> Value
) async -> RPCError? {
    let error: RPCError
    do {
        let value = try await body()
        Issue.record("expected \(code.name) \(reason ?? ""); the call answered \(value)", sourceLocation: sourceLocation)
        return nil
    } catch let rpcError as RPCError {
        error = rpcError
    } catch {
        Issue.record(error, "expected an RPCError \(code.name) \(reason ?? "")", sourceLocation: sourceLocation)
        return nil
    }
    #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
    if let reason { #expect(error.reason == reason, "\(error)", sourceLocation: sourceLocation) }
    return error
}

/// Expects `body` to fail with `reason` and the code API.md sends it with.
@discardableResult
func expectFailure<Value>(
    _ reason: some ErrorReason, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Value
) async -> RPCError? {
    await expectFailure(reason.code, reason: reason.rawValue, sourceLocation: sourceLocation, body)
}

extension RPCError {
    /// The fields named by the `fieldViolations` detail.
    var violatedFields: [String] {
        details?["fieldViolations"]?.arrayValue?.compactMap { $0["field"]?.stringValue } ?? []
    }
}

extension Basket {
    /// The line of `productId`, if the basket has one.
    func line(of productId: Int) -> BasketItem? { items.first { $0.productId == productId } }
}

/// Whether `text` is an RFC 3339 timestamp, e.g. `2026-01-02T03:04:05.678Z`.
func isRFC3339(_ text: String) -> Bool {
    text.range(
        of: #"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$"#, options: .regularExpression) != nil
}
