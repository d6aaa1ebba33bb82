internal import Foundation
internal import Synchronization
internal import SystemCalls
#if canImport(Glibc)
internal import Glibc
#endif

/// Delivers mail as `.eml` files in a directory, for development and tests: each message
/// becomes `<directory>/<yyyyMMdd'T'HHmmss'Z'>-<stem>.eml` holding ``MailMessage/rendered()``,
/// where the timestamp is the message's `Date` in UTC.
///
/// The stem names the delivery. ``deliver(_:)`` uses the message id; ``deliver(_:fileStem:)``
/// takes one from the caller (an outbox id, say). Delivering the same stem again replaces
/// the earlier file, whatever its timestamp, so a retry after a crash does not leave a
/// duplicate. Stems are sanitized to letters, digits and `._@+-`; other characters become `_`.
///
/// Writes are atomic (``System/writeFileAtomically(_:to:mode:replacing:)``): a hidden temporary
/// file in the same directory is written, synced and renamed into place, so a reader sees a
/// whole message or none. The directory is created (mode 0700, as messages carry tokens) when
/// missing; files are mode 0600. Thread-safe for
/// different stems; two concurrent deliveries of one stem leave one of the two messages.
///
/// The transport remembers the file of each stem it has seen, from one listing of the directory
/// at its first delivery (deliveries of an earlier run are replaced too) and from its own
/// deliveries since; a delivery does not list the directory, which grows by one file per mail.
package final class MailDirectoryTransport: MailTransport, Sendable {
    /// The directory the files go to.
    package let directory: String
    /// Stem → file name of every delivery in the directory; nil until the first delivery lists it.
    private let files = Mutex<[String: String]?>(nil)

    /// Creates a transport writing to `directory`, which is created on first delivery.
    package init(directory: String) {
        self.directory = directory
    }

    /// Writes `message` to a file whose stem is its sanitized message id.
    package func deliver(_ message: MailMessage) throws(MailDeliveryError) {
        try deliver(message, fileStem: message.messageID)
    }

    /// Writes `message` to a file with the stem `fileStem` (sanitized), replacing an earlier
    /// delivery with that stem; returns the file's path.
    @discardableResult
    package func deliver(_ message: MailMessage, fileStem: String) throws(MailDeliveryError) -> String {
        let stem = Self.sanitized(fileStem)
        do throws(SystemError) {
            try System.makeDirectory(directory, mode: 0o700)
            let name = existingFile(withStem: stem) ?? "\(message.date.compactUTCText)-\(stem).eml"
            defer { files.withLock { $0?[stem] = name } }
            let path = "\(directory)/\(name)"
            try System.writeFileAtomically(message.rendered().utf8, to: path, mode: 0o600)
            return path
        } catch {
            throw MailDeliveryError(.storage, detail: "\(directory): \(error)")
        }
    }

    /// `stem` reduced to characters that are safe in a file name and cannot hide the file or
    /// climb out of the directory.
    static func sanitized(_ stem: String) -> String {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._@+-".utf8)
        var bytes = stem.utf8.prefix(120).map { allowed.contains($0) ? $0 : UInt8(ascii: "_") }
        if bytes.first == UInt8(ascii: ".") { bytes[0] = UInt8(ascii: "_") }
        return bytes.isEmpty ? "message" : String(decoding: bytes, as: UTF8.self)
    }

    /// The name of an earlier delivery with `stem`, listing the directory on the first call.
    private func existingFile(withStem stem: String) -> String? {
        files.withLock { files in
            if files == nil { files = Self.deliveries(in: directory) }
            return files?[stem]
        }
    }

    /// The file of each stem in `directory`: names `<16-character timestamp>-<stem>.eml`,
    /// the latest by timestamp where a stem has several.
    static func deliveries(in directory: String) -> [String: String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        var files: [String: String] = [:]
        for name in names.sorted() {
            let bytes = Array(name.utf8)
            guard bytes.count > 21, name.hasSuffix(".eml"), bytes[16] == UInt8(ascii: "-"),
                (0x30...0x39).contains(bytes[0])
            else { continue }
            files[String(decoding: bytes[17..<(bytes.count - 4)], as: UTF8.self)] = name
        }
        return files
    }
}
