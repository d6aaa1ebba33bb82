@testable import auth_svc
import Contracts
import Logging
import RPC
import Synchronization
import Testing

/// Email requests by address (`RequestPasswordReset`, `ResendVerification`) are answered
/// before the address is looked up, so their timing tells nothing of whether it has an
/// account (issue 25, point 7); the emails still go out afterwards.
@Suite("EmailRequestQueue: answered first, handled after")
struct EmailRequestQueueTests {
    private let logger = Logger(label: "email-request-test") { _ in SwiftLogNoOpLogHandler() }

    @Test("submit returns while the handler is busy; requests are handled afterwards, in order")
    func submitDoesNotWait() async throws {
        let queue = EmailRequestQueue(capacity: 4)
        let handled = Mutex<[String]>([])
        let released = Atomic(false)
        let worker = Task {
            await queue.run { request in
                while !released.load(ordering: .acquiring) { try? await Task.sleep(for: .milliseconds(5)) }
                handled.withLock { $0.append(request.email) }
            }
        }
        defer { worker.cancel() }
        #expect(queue.submit(.init(kind: .passwordReset, email: "a@example.com")))
        #expect(queue.submit(.init(kind: .verification, email: "b@example.com")))
        try await Task.sleep(for: .milliseconds(50))
        #expect(handled.withLock { $0 }.isEmpty, "nothing is handled before it is released")
        released.store(true, ordering: .releasing)
        while handled.withLock({ $0.count }) < 2 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(handled.withLock { $0 } == ["a@example.com", "b@example.com"])
    }

    @Test("a full queue drops the request at once rather than growing")
    func fullQueueDrops() {
        let queue = EmailRequestQueue(capacity: 2)
        #expect(queue.submit(.init(kind: .passwordReset, email: "a@example.com")))
        #expect(queue.submit(.init(kind: .passwordReset, email: "b@example.com")))
        #expect(!queue.submit(.init(kind: .passwordReset, email: "c@example.com")))
    }

    @Test("RequestPasswordReset answers before it writes the reset token; the token is written after", arguments: [
        EmailRequestQueue.Request.Kind.passwordReset, .verification,
    ])
    func answerDoesNotWaitForTheWrite(kind: EmailRequestQueue.Request.Kind) async throws {
        try await AuthStore.withFresh { store in
            _ = try await store.makePasswordUser("ada@example.com", verified: kind == .passwordReset)
            let queue = EmailRequestQueue()
            let service = try AuthService.inProcess(store: store, emailRequests: queue)
            switch kind {
            case .passwordReset:
                _ = try await service.requestPasswordReset(
                    RequestPasswordResetRequest(email: "Ada@example.com"),
                    context: AuthService.context(for: AuthContract.requestPasswordReset.info))
                _ = try await service.requestPasswordReset(
                    RequestPasswordResetRequest(email: "nobody@example.com"),
                    context: AuthService.context(for: AuthContract.requestPasswordReset.info))
            case .verification:
                _ = try await service.resendVerification(
                    ResendVerificationRequest(email: "Ada@example.com"),
                    context: AuthService.context(for: AuthContract.resendVerification.info))
                _ = try await service.resendVerification(
                    ResendVerificationRequest(email: "nobody@example.com"),
                    context: AuthService.context(for: AuthContract.resendVerification.info))
            }
            #expect(try await store.emailTokenCount() == 0, "the answer came before the store write")
            let worker = Task { await queue.run { await service.perform($0, logger: logger) } }
            defer { worker.cancel() }
            var count: Int64 = 0
            for _ in 0..<200 where count == 0 {
                try await Task.sleep(for: .milliseconds(10))
                count = try await store.emailTokenCount()
            }
            try await Task.sleep(for: .milliseconds(50))
            #expect(try await store.emailTokenCount() == 1, "one email, for the account; none for the unknown address")
        }
    }
}
