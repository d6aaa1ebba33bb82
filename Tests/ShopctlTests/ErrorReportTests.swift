import Contracts
import RPC
import Testing

@testable import shopctl
import JSON

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

    @Test("a service down behind the gateway points at `shopctl health` and exits 5")
    func unreachable() {
        let report = ErrorReport(
            RPCError(code: .unavailable, reason: "UPSTREAM_UNAVAILABLE", message: "No connection to 127.0.0.1:1."))
        #expect(report.line.hasPrefix("error: UPSTREAM_UNAVAILABLE: No connection to 127.0.0.1:1. ("))
        #expect(report.line.contains("shopctl health"))
        #expect(report.line.contains("a service behind the gateway is down"))
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

    @Test("hints use the error's details: the item already in the basket, how many are left, how long to wait")
    func detailedHints() {
        let inBasket = RPCError(
            code: .alreadyExists, reason: "ALREADY_IN_BASKET", message: "Product 3 is already in the basket.",
            details: .object(["productId": .number(3), "itemId": .string("7c9e6679-7425-40de-944b-e07fc1f90ae7")]))
        #expect(ErrorReport(inBasket).hint == "change its count with `shopctl basket set 7c9e6679-7425-40de-944b-e07fc1f90ae7 COUNT`")
        let fewLeft = RPCError(
            code: .failedPrecondition, reason: "OUT_OF_STOCK", message: "Not enough stock.",
            details: .object(["productId": .number(25), "available": .number(7)]))
        #expect(
            ErrorReport(fewLeft).hint
                == "ask for at most 7: `shopctl basket add 25 --count 7`, or `shopctl basket set 25 7` for a line you have")
        let noneLeft = RPCError(
            code: .failedPrecondition, reason: "OUT_OF_STOCK", message: "Sold out.",
            details: .object(["productId": .number(25), "available": .number(0)]))
        #expect(ErrorReport(noneLeft).hint == "remove it with `shopctl basket remove 25` if it is in your basket")
        // At checkout, each product short: the command that fixes its line.
        let shortages = RPCError(
            code: .failedPrecondition, reason: "OUT_OF_STOCK", message: "Not enough stock: …",
            details: .object([
                "productIds": .array([.number(6), .number(8)]),
                "shortages": .array([
                    .object(["productId": .number(6), "available": .number(2), "wanted": .number(3)]),
                    .object(["productId": .number(8), "available": .number(0), "wanted": .number(1)]),
                ]),
            ]))
        #expect(
            ErrorReport(shortages).hint
                == "fix the basket with `shopctl basket set 6 2`, `shopctl basket remove 8`, then place the order again")
        // Details that are not whole numbers are not trusted into a command line.
        let odd = RPCError(
            code: .failedPrecondition, reason: "OUT_OF_STOCK", message: "",
            details: .object(["productId": .number(2.5), "available": .number(1)]))
        #expect(ErrorReport(odd).hint == "lower the count with `shopctl basket set PRODUCT COUNT` or remove the line")
        let limited = RPCError(
            code: .resourceExhausted, reason: "RATE_LIMITED", message: "Slow down.", details: .object(["retryAfterSeconds": .number(2.5)]))
        #expect(ErrorReport(limited).hint == "wait 3 s, then try again")
        // Without details, the reason's general hint.
        #expect(ErrorReport(RPCError(code: .alreadyExists, reason: "ALREADY_IN_BASKET", message: "")).hint?.contains("basket show") == true)
        #expect(ErrorReport(RPCError(code: .resourceExhausted, reason: "RATE_LIMITED", message: "")).hint == "wait a little and try again")
    }

    @Test(
        "the newer reasons have hints",
        arguments: [
            ("SAME_PASSWORD", "choose a password different from the current one"), ("GATEWAY_UNREACHABLE", "`deploy/compose status`"),
            ("GATEWAY_HOST_UNKNOWN", "host name"), ("UNKNOWN_CATEGORY", "`shopctl categories`"),
            ("MISSING_API_KEY", "SHOP_ADMIN_API_KEY"),
        ])
    func newerHints(reason: String, text: String) {
        #expect(ErrorReport.hint(reason: reason, code: .unknown)?.contains(text) == true, "\(reason)")
    }

    @Test("a usage error's line leaves out the USAGE reason: the message says what is wrong with the command line")
    func usageLine() {
        #expect(ErrorReport(ShopctlError.usage("No terminal.", hint: "use --password-stdin")).line == "error: No terminal. (use --password-stdin)")
    }
}
