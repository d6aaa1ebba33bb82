import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `--smtp host:port`: the outbox sends through a real SMTP server (Python `aiosmtpd`), and an
/// email whose delivery fails while the server is down is retried until it gets through.
@Suite("SMTP delivery")
struct SMTPDeliveryLiveTests {
    /// A real SMTP server in a child process that appends each message it receives, as a JSON
    /// line `{"from", "to", "data"}`, to a file. Killed with SIGKILL (a child of the test
    /// runner inherits its blocked signal mask, so SIGTERM may not reach it).
    final class SMTPServer: @unchecked Sendable {
        /// The file the messages go to.
        let inbox: URL
        private let process = Process()

        /// Starts a server on `port` and waits until it accepts connections.
        init(port: Int, directory: URL) async throws {
            inbox = directory.appendingPathComponent("inbox.jsonl")
            let script = """
                import asyncio, json, sys
                from aiosmtpd.controller import Controller
                class Inbox:
                    async def handle_DATA(self, server, session, envelope):
                        with open(sys.argv[2], "a") as f:
                            f.write(json.dumps({"from": envelope.mail_from, "to": envelope.rcpt_tos,
                                                "data": envelope.content.decode("utf-8", "replace")}) + "\\n")
                        return "250 OK"
                controller = Controller(Inbox(), hostname="127.0.0.1", port=int(sys.argv[1]))
                controller.start()
                print("ready", flush=True)
                asyncio.new_event_loop().run_forever()
                """
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", "-c", script, "\(port)", inbox.path]
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            let ready = await onThread { output.fileHandleForReading.availableData }
            try #require(String(decoding: ready, as: UTF8.self).contains("ready"), "the SMTP server did not start")
        }

        /// The messages received so far.
        var messages: [(from: String, to: [String], data: String)] {
            guard let text = try? String(contentsOf: inbox, encoding: .utf8) else { return [] }
            return text.split(separator: "\n").compactMap { line in
                guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
                return (object["from"] as? String ?? "", object["to"] as? [String] ?? [], object["data"] as? String ?? "")
            }
        }

        /// Kills the server; Foundation reaps it in the background, and nothing needs it gone
        /// sooner.
        func stop() {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
    }

    /// A loopback port nothing listens on right now.
    func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(descriptor, socketAddress, length) == 0 && getsockname(descriptor, socketAddress, &length) == 0
            }
        }
        try #require(bound, "cannot find a free port")
        return Int(UInt16(bigEndian: address.sin_port))
    }

    @Test("a verification email that fails while the SMTP server is down is retried and delivered once it is up")
    func retriedUntilDelivered() async throws {
        let port = try freePort()
        try await withLiveAuthService(extraArguments: ["--smtp", "127.0.0.1:\(port)"]) { service in
            let email = "smtp-\(UUID().uuidString.prefix(8).lowercased())@example.com"
            try await service.signUp(email)
            let failed = try await service.log.first(within: .seconds(10)) { line in
                line.contains("email delivery failed") ? true : nil
            }
            #expect(failed == true, "the first attempt fails: nothing listens yet")

            let server = try await SMTPServer(port: port, directory: service.dataDirectory)
            defer { server.stop() }
            var delivered: (from: String, to: [String], data: String)?
            for _ in 0..<300 where delivered == nil {
                delivered = server.messages.first
                if delivered == nil { try await Task.sleep(for: .milliseconds(50)) }
            }
            let message = try #require(delivered, "the email was not delivered after the server came up")
            #expect(message.from == "no-reply@storefront.local")
            #expect(message.to == [email])
            #expect(message.data.contains("X-Storefront-Kind: verify-email"))
            #expect(message.data.contains("\(AuthServiceUnderTest.linkBaseURL)/verify-email?token="))
            #expect(server.messages.count == 1, "delivered exactly once")

            let token = try #require(
                message.data.split(whereSeparator: \.isNewline).first { $0.hasPrefix("Token: ") }?.dropFirst(7),
                "no Token: line")
            let user = try await service.client.unary(
                AuthContract.verifyEmail, VerifyEmailRequest(token: String(token)), options: service.options()
            ).user
            #expect(user.emailVerified)
            #expect(service.mails(to: email, kind: .verifyEmail).isEmpty, "with --smtp nothing is written to the mail directory")
        }
    }
}
