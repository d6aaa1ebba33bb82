package import Contracts
import Foundation
package import RPC
package import Testing
import JSON

/// Runs `body`, expecting it to fail with an ``RPCError`` of `code` and, when given, `reason`;
/// records an issue otherwise. Returns the error for further checks.
@discardableResult
package func expectRPCError<Value>(
    _ code: RPCCode, reason: String? = nil, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> Value
) async -> RPCError? {
    do {
        let value = try await body()
        Issue.record("expected \(code.name) \(reason ?? ""), but the call succeeded with \(value)", sourceLocation: sourceLocation)
        return nil
    } catch let error as RPCError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        if let reason {
            #expect(error.reason == reason, "\(error)", sourceLocation: sourceLocation)
        }
        return error
    } catch {
        Issue.record(error, "expected an RPCError \(code.name) \(reason ?? "")", sourceLocation: sourceLocation)
        return nil
    }
}

/// Runs `body`, expecting it to fail with `reason` and the code it always travels with.
@discardableResult
package func expectRPCError<Value>(
    _ reason: some ErrorReason, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Value
) async -> RPCError? {
    await expectRPCError(reason.code, reason: reason.rawValue, sourceLocation: sourceLocation, body)
}

extension RPCError {
    /// The `field` members of the `fieldViolations` detail, in order; empty when there is none.
    package var violatedFields: [String] {
        details?["fieldViolations"]?.arrayValue?.compactMap { $0["field"]?.stringValue } ?? []
    }
}

/// Whether `text` is an RFC 3339 timestamp (`2025-06-15T12:34:56Z`, fraction and offset optional).
package func isRFC3339(_ text: String) -> Bool {
    let pattern = #"^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})$"#
    return text.range(of: pattern, options: .regularExpression) != nil
}
