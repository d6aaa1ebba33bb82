import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A real SMTP server for live tests: Python's `aiosmtpd` in a child process on a free port of
/// 127.0.0.1, recording each message it accepts as a JSON line. Other modes stand in for
/// servers that refuse `EHLO`, never answer, or do not listen at all.
///
/// Owned by one test, which calls ``stop()`` when done (`defer`); not shared between threads.
final class SMTPTestServer {
    /// How the server behaves.
    enum Mode: String {
        /// `aiosmtpd` accepting mail, except for the recipients given replies in `rejecting`.
        case smtp
        /// Like `smtp`, but `EHLO` is answered with 502, so clients must fall back to `HELO`.
        case refusingEHLO = "no-ehlo"
        /// Accepts connections and never sends a byte.
        case silent
        /// Holds a bound port without listening: connecting to it is refused.
        case notListening = "closed"
    }

    /// One message as the server received it.
    struct ReceivedMail: Decodable {
        /// The `HELO`/`EHLO` name the client gave.
        let heloName: String
        /// The `MAIL FROM` address.
        let mailFrom: String
        /// Parameters after `MAIL FROM`, e.g. `BODY=8BITMIME`.
        let mailOptions: [String]
        /// The `RCPT TO` addresses.
        let rcptTos: [String]
        /// The message data after the server removed the dot-stuffing.
        let content: String
    }

    /// The port the server listens on (or holds, for ``Mode/notListening``).
    let port: Int
    private let process = Process()
    private let directory: URL

    /// Starts the server; `rejecting` maps a recipient to the full reply its `RCPT TO` gets.
    init(mode: Mode = .smtp, rejecting: [String: String] = [:]) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("smtp-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let script = directory.appendingPathComponent("server.py")
        try Self.script.write(to: script, atomically: true, encoding: .utf8)
        let rejections = try JSONEncoder().encode(rejecting)
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path, mode.rawValue, directory.appendingPathComponent("received.jsonl").path,
                             String(decoding: rejections, as: UTF8.self)]
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        var firstLine = Data()
        while !firstLine.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            firstLine.append(chunk)
        }
        guard let port = Int(String(decoding: firstLine, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            try? FileManager.default.removeItem(at: directory)
            throw CocoaError(.fileReadCorruptFile, userInfo: [NSLocalizedDescriptionKey: "the SMTP test server did not start"])
        }
        self.port = port
    }

    /// The messages accepted so far, oldest first.
    func received() throws -> [ReceivedMail] {
        let file = directory.appendingPathComponent("received.jsonl")
        guard FileManager.default.fileExists(atPath: file.path) else { return [] }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try String(contentsOf: file, encoding: .utf8).split(separator: "\n").map {
            try decoder.decode(ReceivedMail.self, from: Data($0.utf8))
        }
    }

    /// Kills the child process and removes its files.
    func stop() {
        if process.isRunning {
            // SIGKILL, not Process.terminate(): the child inherits the blocked signal mask of
            // the test's worker thread, so a SIGTERM would stay pending forever.
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    /// The server: prints its port once it accepts connections, then serves until killed.
    private static let script = #"""
        import asyncio, json, socket, sys
        from aiosmtpd.smtp import SMTP

        mode, log_path, rejections = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])

        class Recorder:
            async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
                if address in rejections:
                    return rejections[address]
                envelope.rcpt_tos.append(address)
                return "250 OK"

            async def handle_DATA(self, server, session, envelope):
                record = {
                    "helo_name": session.host_name,
                    "mail_from": envelope.mail_from,
                    "mail_options": envelope.mail_options,
                    "rcpt_tos": envelope.rcpt_tos,
                    "content": envelope.content.decode("utf-8", errors="replace"),
                }
                with open(log_path, "a") as log:
                    log.write(json.dumps(record) + "\n")
                return "250 Message accepted for delivery"

        class RefusingEHLO(Recorder):
            async def handle_EHLO(self, server, session, envelope, hostname, responses):
                return ["502 5.5.2 EHLO not implemented"]

        async def main():
            loop = asyncio.get_running_loop()
            if mode == "closed":
                held = socket.socket()
                held.bind(("127.0.0.1", 0))
                print(held.getsockname()[1], flush=True)
                await asyncio.Event().wait()
            if mode == "silent":
                async def hold(reader, writer):
                    await reader.read()
                server = await asyncio.start_server(hold, "127.0.0.1", 0)
            else:
                handler = RefusingEHLO() if mode == "no-ehlo" else Recorder()
                server = await loop.create_server(lambda: SMTP(handler, hostname="test.local"), "127.0.0.1", 0)
            print(server.sockets[0].getsockname()[1], flush=True)
            await server.serve_forever()

        asyncio.run(main())
        """#
}
