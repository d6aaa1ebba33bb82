import Foundation
import Testing

@testable import Mail

/// The SMTP client against a real server (`aiosmtpd` in a child process) and against peers
/// that refuse, reject or stay silent.
@Suite("Delivering over SMTP", .timeLimit(.minutes(1)))
struct SMTPTransportLiveTests {
    /// A verification mail with a fixed message id.
    static func message(to: String = "ada@example.com", body: String = "Hello") throws -> MailMessage {
        try MailMessage(
            from: "Storefront <no-reply@storefront.local>", to: to, subject: "Confirm your email", body: body,
            headers: [("X-Storefront-Kind", "verify-email")], messageID: "outbox-42@storefront.local")
    }

    /// A transport to the test server on 127.0.0.1.
    static func transport(port: Int, timeout: Duration = .seconds(5)) -> SMTPTransport {
        SMTPTransport(host: "127.0.0.1", port: port, heloName: "shop.test", timeout: timeout)
    }

    /// The delivery error `body` throws, if it throws one.
    static func deliveryError(_ body: () throws -> Void) -> MailDeliveryError? {
        do {
            try body()
            return nil
        } catch {
            return error as? MailDeliveryError
        }
    }

    @Test("a message arrives with its envelope and content, dot lines intact")
    func delivers() throws {
        let server = try SMTPTestServer()
        defer { server.stop() }
        let message = try Self.message(body: "Verify here:\n.\n.hidden line\n..two dots\nend")
        try Self.transport(port: server.port).deliver(message)
        let received = try server.received()
        try #require(received.count == 1)
        #expect(received[0].heloName == "shop.test")
        #expect(received[0].mailFrom == "no-reply@storefront.local")
        #expect(received[0].rcptTos == ["ada@example.com"])
        #expect(received[0].mailOptions.isEmpty)
        #expect(received[0].content == message.rendered())
        #expect(received[0].content.contains("\r\n.\r\n.hidden line\r\n..two dots\r\n"))
    }

    @Test("a non-ASCII body is announced as BODY=8BITMIME and arrives byte for byte")
    func eightBitBody() throws {
        let server = try SMTPTestServer()
        defer { server.stop() }
        let message = try Self.message(body: "Grüße aus dem Laden 🛒")
        try Self.transport(port: server.port).deliver(message)
        let received = try #require(try server.received().first)
        #expect(received.mailOptions == ["BODY=8BITMIME"])
        #expect(received.content == message.rendered())
    }

    @Test("one transport delivers several messages, each on its own connection")
    func severalMessages() throws {
        let server = try SMTPTestServer()
        defer { server.stop() }
        let transport = Self.transport(port: server.port)
        for recipient in ["a@example.com", "b@example.com", "c@example.com"] {
            try transport.deliver(try Self.message(to: recipient))
        }
        #expect(try server.received().map(\.rcptTos) == [["a@example.com"], ["b@example.com"], ["c@example.com"]])
    }

    @Test("a server that refuses EHLO gets HELO instead")
    func heloFallback() throws {
        let server = try SMTPTestServer(mode: .refusingEHLO)
        defer { server.stop() }
        try Self.transport(port: server.port).deliver(try Self.message())
        let received = try #require(try server.received().first)
        #expect(received.heloName == "shop.test")
        #expect(received.rcptTos == ["ada@example.com"])
    }

    @Test(
        "a 5xx answer to RCPT is permanent, a 4xx one transient",
        arguments: [("550 5.1.1 No such user here", 550, false), ("451 4.3.0 Try again later", 451, true)])
    func rejectedRecipient(reply: String, code: Int, isTransient: Bool) throws {
        let server = try SMTPTestServer(rejecting: ["gone@example.com": reply])
        defer { server.stop() }
        let message = try Self.message(to: "gone@example.com")
        let error = try #require(Self.deliveryError { try Self.transport(port: server.port).deliver(message) })
        #expect(error.reason == .rejected(replyCode: code))
        #expect(error.isTransient == isTransient)
        #expect(error.detail.contains(reply))
        #expect(try server.received().isEmpty)
    }

    @Test("a refused connection is a transient error")
    func connectionRefused() throws {
        let server = try SMTPTestServer(mode: .notListening)
        defer { server.stop() }
        let error = try #require(Self.deliveryError { try Self.transport(port: server.port).deliver(try Self.message()) })
        #expect(error.reason == .cannotConnect)
        #expect(error.isTransient)
        #expect(error.detail.contains("refused"))
    }

    @Test("a server that never answers fails with a transient timeout, within the timeout")
    func silentServer() throws {
        let server = try SMTPTestServer(mode: .silent)
        defer { server.stop() }
        let clock = ContinuousClock()
        let start = clock.now
        let error = try #require(Self.deliveryError {
            try Self.transport(port: server.port, timeout: .milliseconds(500)).deliver(try Self.message())
        })
        let took = start.duration(to: clock.now)
        #expect(error.reason == .timedOut)
        #expect(error.isTransient)
        #expect(took >= .milliseconds(450) && took < .seconds(2), "took \(took)")
    }

    @Test("a host name that does not resolve cannot connect, transiently")
    func unresolvableHost() throws {
        let transport = SMTPTransport(host: "no-such-host.invalid", port: 25, timeout: .seconds(5))
        let error = try #require(Self.deliveryError { try transport.deliver(try Self.message()) })
        #expect(error.reason == .cannotConnect)
        #expect(error.isTransient)
    }
}
