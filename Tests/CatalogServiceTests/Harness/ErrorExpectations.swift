import Contracts
import RPC
import Testing

/// Runs `body` and expects it to fail with an ``RPCError`` of `code` and, unless nil,
/// `reason`; records an issue otherwise. Returns the error for further checks.
@discardableResult
func expectError<Value>(
    _ code: RPCCode, reason: String?, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> Value
) async -> RPCError? {
    do {
        let value = try await body()
        Issue.record("expected \(code.name) \(reason ?? ""), got success: \(value)", sourceLocation: sourceLocation)
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

/// Runs `body` and expects it to fail with `reason` and the one code that reason travels with.
@discardableResult
func expectError<Value>(
    _ reason: some ErrorReason, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Value
) async -> RPCError? {
    await expectError(reason.code, reason: reason.rawValue, sourceLocation: sourceLocation, body)
}

extension RPCError {
    /// The `field` of each entry of the `fieldViolations` detail, in order.
    var violatedFields: [String] {
        details?["fieldViolations"]?.arrayValue?.compactMap { $0["field"]?.stringValue } ?? []
    }

    /// Whether a field violation names `field`, either bare (`title`) or as a path inside the
    /// request (`product.title`): the READMEs name fields without saying which.
    func namesField(_ field: String) -> Bool {
        violatedFields.contains { $0 == field || $0.hasSuffix(".\(field)") }
    }

    /// The `productIds` detail of `OUT_OF_STOCK`, or nil when there is none.
    var outOfStockProductIDs: [Int]? {
        guard let values = details?["productIds"]?.arrayValue else { return nil }
        return values.compactMap { value -> Int? in
            if case .number(let number) = value { return Int(exactly: number) }
            return nil
        }
    }
}
