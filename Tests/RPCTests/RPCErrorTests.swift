import RPC
import Testing
import JSON

@Suite("RPCError")
struct RPCErrorTests {
    private enum CatalogError: RPCErrorConvertible, Equatable {
        case productNotFound(Int)

        var rpcError: RPCError {
            switch self {
            case .productNotFound(let id):
                RPCError(code: .notFound, reason: "PRODUCT_NOT_FOUND", message: "No product \(id).")
            }
        }
    }

    private struct DiskOnFire: Error, Equatable {
        let path: String
    }

    @Test("converting an RPCError keeps it as it is")
    func convertingRPCError() {
        let original = RPCError(
            code: .failedPrecondition, reason: "BASKET_EMPTY", message: "The basket is empty.",
            details: .object(["items": .number(0)]))
        let converted = RPCError(converting: original)
        #expect(converted.code == .failedPrecondition)
        #expect(converted.reason == "BASKET_EMPTY")
        #expect(converted.message == "The basket is empty.")
        #expect(converted.details == .object(["items": .number(0)]))
    }

    @Test("converting an RPCErrorConvertible uses its rpcError")
    func convertingConvertible() {
        let converted = RPCError(converting: CatalogError.productNotFound(42))
        #expect(converted.code == .notFound)
        #expect(converted.reason == "PRODUCT_NOT_FOUND")
        #expect(converted.message == "No product 42.")
    }

    @Test("converting a CancellationError gives CANCELLED")
    func convertingCancellation() {
        let converted = RPCError(converting: CancellationError())
        #expect(converted.code == .cancelled)
        #expect(converted.cause is CancellationError)
    }

    @Test("converting any other error gives a generic INTERNAL that keeps the cause for the log")
    func convertingUnexpected() throws {
        let converted = RPCError(converting: DiskOnFire(path: "/var/lib/secret.db"))
        #expect(converted.code == .internal)
        #expect(converted.message == "Internal error.")
        #expect(converted.reason == nil)
        #expect(converted.details == nil)
        #expect(!converted.description.contains("secret"))
        let cause = try #require(converted.cause as? DiskOnFire)
        #expect(cause == DiskOnFire(path: "/var/lib/secret.db"))
        // Nothing of the cause reaches the trailers.
        #expect(!converted.trailers.contains { $0.1.contains("secret") })
    }

    @Test("internalError(cause:) is the same generic INTERNAL")
    func internalError() {
        let error = RPCError.internalError(cause: DiskOnFire(path: "x"))
        #expect(error.code == .internal)
        #expect(error.message == "Internal error.")
        #expect(error.cause is DiskOnFire)
    }

    @Test("invalidField names the field in the message and in a fieldViolations detail")
    func invalidField() throws {
        let error = RPCError.invalidField("email", "must contain @", reason: "INVALID_EMAIL")
        #expect(error.code == .invalidArgument)
        #expect(error.reason == "INVALID_EMAIL")
        #expect(error.message == "email: must contain @")
        let violations = try #require(error.details?["fieldViolations"]?.arrayValue)
        #expect(violations.count == 1)
        #expect(violations.first?["field"]?.stringValue == "email")
        #expect(violations.first?["description"]?.stringValue == "must contain @")
    }

    @Test(
        "the description reads code, reason and message",
        arguments: [
            (RPCError(code: .notFound, reason: "PRODUCT_NOT_FOUND", message: "No product 7."),
             "NOT_FOUND (PRODUCT_NOT_FOUND): No product 7."),
            (RPCError(code: .unavailable, message: "Try later."), "UNAVAILABLE: Try later."),
            (RPCError(code: .aborted, message: ""), "ABORTED"),
        ])
    func description(error: RPCError, text: String) {
        #expect(error.description == text)
    }
}
