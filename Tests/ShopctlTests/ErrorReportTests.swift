import Contracts
import RPC
import Testing

@testable import shopctl

/// shopctl's exit statuses (Swift Testing has an `ExitStatus` of its own).
typealias ExitStatus = shopctl.ExitStatus

/// What a failure looks like on standard error, and the exit status of its class.
@Suite("ErrorReport and ExitStatus: one line, a reason, a hint, an exit code by class")
struct ErrorReportTests {
    @Test(
        "maps every status code to its documented class",
        arguments: [
            (RPCCode.unauthenticated, ExitStatus.authentication),
            (.invalidArgument, .rejected), (.notFound, .rejected), (.alreadyExists, .rejected),
            (.failedPrecondition, .rejected), (.aborted, .rejected), (.outOfRange, .rejected),
            (.unavailable, .unavailable), (.deadlineExceeded, .unavailable),
            (.permissionDenied, .permissionDenied), (.resourceExhausted, .limited),
            (.internal, .failure), (.unknown, .failure), (.unimplemented, .failure), (.cancelled, .failure),
            (.dataLoss, .failure),
        ])
    func exitStatusByCode(code: RPCCode, status: ExitStatus) {
        #expect(ExitStatus(code) == status)
    }

    @Test("the exit codes are the documented numbers")
    func exitCodeNumbers() {
        #expect(ExitStatus.allCases.map(\.rawValue) == [0, 1, 2, 3, 4, 5, 6, 7])
    }

    @Test("names the reason, repeats the server's message and says what to do")
    func productNotFound() {
        let report = ErrorReport(CatalogReason.productNotFound.error("No product has id 999."))
        #expect(report.line == "error: PRODUCT_NOT_FOUND: No product has id 999. (check the id with `shopctl products list`)")
        #expect(report.status == .rejected)
    }

    @Test("a declined card is a refused request with advice")
    func paymentDeclined() {
        let report = ErrorReport(OrderReason.paymentDeclined.error("The card was declined."))
        #expect(
            report.line
                == "error: PAYMENT_DECLINED: The card was declined. (try another card; the order is kept as PAYMENT_FAILED and the basket as it was)")
        #expect(report.status == .rejected)
    }

    @Test("without a reason the code names the failure, with the code's hint")
    func codeWithoutReason() {
        let report = ErrorReport(RPCError(code: .deadlineExceeded, message: "Deadline exceeded."))
        #expect(report.line.hasPrefix("error: DEADLINE_EXCEEDED: Deadline exceeded. ("))
        #expect(report.line.contains("--timeout"))
        #expect(report.status == .unavailable)
    }

    @Test("an unreachable gateway points at `shopctl health` and exits 5")
    func unreachable() {
        let report = ErrorReport(
            RPCError(code: .unavailable, reason: "UPSTREAM_UNAVAILABLE", message: "No connection to 127.0.0.1:1."))
        #expect(report.line.hasPrefix("error: UPSTREAM_UNAVAILABLE: No connection to 127.0.0.1:1. ("))
        #expect(report.line.contains("shopctl health"))
        #expect(report.status == .unavailable)
    }

    @Test("an ended session says to sign in again and exits 3")
    func sessionEnded() {
        let report = ErrorReport(ShopctlError.sessionEnded)
        #expect(report.line == "error: SESSION_ENDED: Your session has ended. (run `shopctl auth login`)")
        #expect(report.status == .authentication)
        #expect(ErrorReport(ShopctlError.notSignedIn).status == .authentication)
    }

    @Test("a message over several lines stays on one line, and no hint means no parentheses")
    func oneLine() {
        let report = ErrorReport(RPCError(code: .internal, message: "first\nsecond"))
        #expect(report.line == "error: INTERNAL: first second")
        #expect(report.status == .failure)
    }

    @Test("any other error is a general failure with its description")
    func otherErrors() {
        struct Odd: Error, CustomStringConvertible { var description: String { "odd thing" } }
        let report = ErrorReport(other: Odd())
        #expect(report.line == "error: LOCAL_ERROR: odd thing")
        #expect(report.status == .failure)
    }
}
