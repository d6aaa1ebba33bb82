import RPC
import Testing

@Suite("RPCCode")
struct RPCCodeTests {
    static let canonical: [(Int, String)] = [
        (1, "CANCELLED"), (2, "UNKNOWN"), (3, "INVALID_ARGUMENT"), (4, "DEADLINE_EXCEEDED"), (5, "NOT_FOUND"),
        (6, "ALREADY_EXISTS"), (7, "PERMISSION_DENIED"), (8, "RESOURCE_EXHAUSTED"), (9, "FAILED_PRECONDITION"),
        (10, "ABORTED"), (11, "OUT_OF_RANGE"), (12, "UNIMPLEMENTED"), (13, "INTERNAL"), (14, "UNAVAILABLE"),
        (15, "DATA_LOSS"), (16, "UNAUTHENTICATED"),
    ]

    @Test("every code has its canonical number and name, and both round trip", arguments: canonical)
    func namesRoundTrip(value: Int, name: String) throws {
        let code = try #require(RPCCode(rawValue: value))
        #expect(code.rawValue == value)
        #expect(code.name == name)
        #expect(code.description == name)
        #expect(RPCCode(name: name) == code)
    }

    @Test("the static constants carry the canonical numbers")
    func constants() {
        let constants: [RPCCode] = [
            .cancelled, .unknown, .invalidArgument, .deadlineExceeded, .notFound, .alreadyExists,
            .permissionDenied, .resourceExhausted, .failedPrecondition, .aborted, .outOfRange, .unimplemented,
            .internal, .unavailable, .dataLoss, .unauthenticated,
        ]
        #expect(constants.map(\.rawValue) == Array(1...16))
        #expect(RPCCode.all == constants)
    }

    @Test("OK and values outside 1...16 are not codes", arguments: [0, 17, -1, 100, Int.max, Int.min])
    func rejectsOutOfRange(value: Int) {
        #expect(RPCCode(rawValue: value) == nil)
    }

    @Test("unknown or differently spelled names are rejected", arguments: ["OK", "not_found", "NotFound", "", "NOT_FOUND "])
    func rejectsNames(name: String) {
        #expect(RPCCode(name: name) == nil)
    }

    @Test(
        "an HTTP status without grpc-status maps as the gRPC spec says",
        arguments: [
            (400, RPCCode.internal), (401, .unauthenticated), (403, .permissionDenied), (404, .unimplemented),
            (429, .unavailable), (502, .unavailable), (503, .unavailable), (504, .unavailable),
            (200, .unknown), (415, .unknown), (500, .unknown), (501, .unknown), (0, .unknown),
        ])
    func httpStatusMapping(status: Int, code: RPCCode) {
        #expect(RPCCode.forHTTPStatus(status) == code)
    }
}
