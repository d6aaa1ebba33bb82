import RPC

/// A failure shopctl itself detects (as opposed to one the server answers): it carries the
/// exit status, a reason in the style of the server's, a message and what to do about it.
struct ShopctlError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The exit status the process ends with.
    var status: ExitStatus
    /// A stable, upper-case reason such as `NOT_SIGNED_IN`.
    var reason: String
    /// What went wrong, for people; a full sentence.
    var message: String
    /// What to do about it, if there is something to say.
    var hint: String?
    /// The parts of the failure, one line each, printed under the error's line (the faulty
    /// products of a file); empty for most errors.
    var problems: [String] = []
    /// The gRPC status code that says the same, for `--json` errors (``ExitStatus/code``).
    var code: RPCCode { status.code }

    /// Creates an error.
    init(_ status: ExitStatus, reason: String, _ message: String, hint: String? = nil, problems: [String] = []) {
        self.status = status
        self.reason = reason
        self.message = message
        self.hint = hint
        self.problems = problems
    }

    /// The error as printed: reason, message and hint on one line, then its problems.
    var description: String { ErrorReport(self).line }

    /// No credentials are stored.
    static let notSignedIn = ShopctlError(
        .authentication, reason: "NOT_SIGNED_IN", "You are not signed in.",
        hint: "run `shopctl auth login --email EMAIL`")

    /// The refresh token was refused: the credentials were deleted.
    static let sessionEnded = ShopctlError(
        .authentication, reason: "SESSION_ENDED", "Your session has ended.", hint: "run `shopctl auth login`")

    /// A command-line value that `validate()` could not check (it needs a file or the terminal).
    static func usage(_ message: String, hint: String? = nil) -> ShopctlError {
        ShopctlError(.usage, reason: "USAGE", message, hint: hint)
    }

    /// A local failure: a file that cannot be read or written, a terminal that cannot be used.
    static func local(_ message: String, hint: String? = nil) -> ShopctlError {
        ShopctlError(.failure, reason: "LOCAL_ERROR", message, hint: hint)
    }
}
