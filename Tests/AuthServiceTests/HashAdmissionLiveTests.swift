import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

/// Password hashing's admission (README "Password hashing"): a full queue answers
/// `RESOURCE_EXHAUSTED`/`OVERLOADED` at once rather than after a wait.
@Suite("Password hashing admission")
struct HashAdmissionLiveTests {
    @Test("with one thread and two places, a burst of sign-ins from many addresses is refused OVERLOADED at once beyond them")
    func fullQueueRefusesAtOnce() async throws {
        let arguments = [
            "--hash-threads", "1", "--hash-queue-limit", "2", "--hash-queue-per-address", "2",
            "--hash-queue-per-account", "2", "--scrypt-log-n", "16",
        ]
        try await withLiveAuthService(extraArguments: arguments) { service in
            let results = await withTaskGroup(of: (String, Duration).self) { group in
                for index in 0..<8 {
                    group.addTask {
                        let started = ContinuousClock.now
                        do {
                            _ = try await service.client.unary(
                                AuthContract.signIn,
                                SignInRequest(email: "flood-\(index)@example.com", password: "not-the-password-9"),
                                options: service.internalOptions(forwardedFor: "203.0.113.\(index)", timeout: .seconds(30)))
                            return ("OK", ContinuousClock.now - started)
                        } catch {
                            return (RPCError(converting: error).reason ?? "\(error)", ContinuousClock.now - started)
                        }
                    }
                }
                return await group.reduce(into: [(String, Duration)]()) { $0.append($1) }
            }
            let refused = results.filter { $0.0 == "OVERLOADED" }.map(\.1)
            let checked = results.filter { $0.0 == AuthReason.invalidCredentials.rawValue }.map(\.1)
            // One runs and two wait; the other five are refused.
            #expect(refused.count == 5, "\(results)")
            #expect(checked.count == 3, "\(results)")
            // Refused before any hash could have been paid for them: faster than the fastest checked answer.
            if let slowestRefusal = refused.max(), let fastestCheck = checked.min() {
                #expect(slowestRefusal < fastestCheck, "\(results)")
            }
            // The refusals were not failures: a sign-in of a new account still goes through.
            try await service.signUpAndVerify("ada@example.com")
            #expect(try await service.signIn("ada@example.com", timeout: .seconds(30)).user.email == "ada@example.com")
        }
    }
}
