import Foundation
import Testing

@testable import Mail

/// Delivering mail as files, as development and tests do.
@Suite("Delivering to a mail directory")
struct MailDirectoryTransportTests {
    /// A fresh directory path under the system's temporary directory, not yet created.
    static func scratchDirectory() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("mail-dir-\(UUID().uuidString)").path
    }

    /// A verification mail dated 2026-05-05 16:53:20 UTC unless `date` says otherwise.
    static func message(body: String = "Your code is 123456", date: Date = Date(timeIntervalSince1970: 1_778_000_000))
        throws -> MailMessage
    {
        try MailMessage(
            from: "Storefront <no-reply@storefront.local>", to: "ada@example.com", subject: "Verify", body: body,
            headers: [("X-Storefront-Kind", "verify-email")], messageID: "outbox-42@storefront.local", date: date)
    }

    /// The names in `directory`, sorted.
    static func files(in directory: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
    }

    /// The permission bits of `path`.
    static func permissions(of path: String) throws -> Int {
        try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    @Test("a delivered message appears as a timestamped .eml file holding the rendered message")
    func fileAppears() throws {
        let directory = Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let message = try Self.message()
        let path = try MailDirectoryTransport(directory: directory).deliver(message, fileStem: "outbox-42")
        #expect(path == "\(directory)/20260505T165320Z-outbox-42.eml")
        #expect(try Self.files(in: directory) == ["20260505T165320Z-outbox-42.eml"])
        #expect(try String(contentsOfFile: path, encoding: .utf8) == message.rendered())
        #expect(try Self.permissions(of: path) == 0o600)
    }

    @Test("through the protocol, the file is named after the message id")
    func stemFromMessageID() throws {
        let directory = Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let transport: any MailTransport = MailDirectoryTransport(directory: directory)
        try transport.deliver(try Self.message())
        #expect(try Self.files(in: directory) == ["20260505T165320Z-outbox-42@storefront.local.eml"])
    }

    @Test("a missing directory is created, with its parents, readable by the owner only")
    func directoryCreated() throws {
        let root = Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let directory = "\(root)/nested/outbox"
        try MailDirectoryTransport(directory: directory).deliver(try Self.message())
        #expect(try Self.permissions(of: directory) == 0o700)
        #expect(try Self.permissions(of: root) == 0o700)
        #expect(try Self.files(in: directory).count == 1)
    }

    @Test("delivering the same stem again replaces the file, even with a newer date")
    func sameStemOverwrites() throws {
        let directory = Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let transport = MailDirectoryTransport(directory: directory)
        let first = try transport.deliver(try Self.message(body: "first attempt"), fileStem: "7")
        let retry = try Self.message(body: "second attempt", date: Date(timeIntervalSince1970: 1_778_000_600))
        let second = try transport.deliver(retry, fileStem: "7")
        try transport.deliver(try Self.message(body: "another message"), fileStem: "outbox-7")
        #expect(second == first)
        #expect(try Self.files(in: directory) == ["20260505T165320Z-7.eml", "20260505T165320Z-outbox-7.eml"])
        #expect(try String(contentsOfFile: second, encoding: .utf8) == retry.rendered())
    }

    @Test("a delivery replaces the file of the same stem left by an earlier run, and only that one")
    func replacesEarlierRun() throws {
        let directory = Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try MailDirectoryTransport(directory: directory).deliver(try Self.message(body: "before the crash"), fileStem: "outbox-9")
        try MailDirectoryTransport(directory: directory).deliver(try Self.message(body: "other"), fileStem: "outbox-90")
        try "not mail".write(toFile: "\(directory)/notes-outbox-9.eml", atomically: true, encoding: .utf8)
        // A new process's transport.
        let retry = try Self.message(body: "after the restart", date: Date(timeIntervalSince1970: 1_778_000_600))
        let path = try MailDirectoryTransport(directory: directory).deliver(retry, fileStem: "outbox-9")
        #expect(path.hasSuffix("/20260505T165320Z-outbox-9.eml"))
        #expect(try String(contentsOfFile: path, encoding: .utf8) == retry.rendered())
        #expect(try Self.files(in: directory) == [
            "20260505T165320Z-outbox-9.eml", "20260505T165320Z-outbox-90.eml", "notes-outbox-9.eml",
        ])
        #expect(MailDirectoryTransport.deliveries(in: directory) == [
            "outbox-9": "20260505T165320Z-outbox-9.eml", "outbox-90": "20260505T165320Z-outbox-90.eml",
        ])
    }

    @Test("a replacement is renamed into place: a reader of the old file still sees it whole, and no temporary file stays")
    func atomicReplacement() throws {
        let directory = Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let transport = MailDirectoryTransport(directory: directory)
        let old = try Self.message(body: String(repeating: "old line\n", count: 2000))
        let path = try transport.deliver(old, fileStem: "a")
        let reader = try #require(FileHandle(forReadingAtPath: path))
        defer { try? reader.close() }
        try transport.deliver(try Self.message(body: "new"), fileStem: "a")
        let seenByReader = try #require(try reader.readToEnd())
        #expect(String(decoding: seenByReader, as: UTF8.self) == old.rendered())
        #expect(try String(contentsOfFile: path, encoding: .utf8).hasSuffix("\r\n\r\nnew\r\n"))
        #expect(try Self.files(in: directory) == ["20260505T165320Z-a.eml"])
    }

    @Test("stems are sanitized so they cannot leave the directory or hide the file", arguments: [
        ("../../etc/passwd", "_._.._etc_passwd"), (".hidden", "_hidden"), ("a b/c", "a_b_c"), ("", "message"),
        ("Outbox_42+x@y.z", "Outbox_42+x@y.z"),
    ])
    func sanitizedStems(stem: String, expected: String) {
        #expect(MailDirectoryTransport.sanitized(stem) == expected)
    }

    @Test("a directory that cannot be created is a transient storage error")
    func unwritableDirectory() throws {
        let blocker = Self.scratchDirectory()
        try Data("not a directory".utf8).write(to: URL(fileURLWithPath: blocker))
        defer { try? FileManager.default.removeItem(atPath: blocker) }
        #expect {
            try MailDirectoryTransport(directory: "\(blocker)/outbox").deliver(try Self.message())
        } throws: { error in
            let error = error as? MailDeliveryError
            return error?.reason == .storage && error?.isTransient == true
        }
    }
}
