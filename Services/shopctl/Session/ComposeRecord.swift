import Foundation
import RPC

/// What `deploy/compose up` last started, as it records it in ``ConfigPaths/composeRecord``:
/// `{"gateway": "127.0.0.1:8080", "mailDir": "/abs/.data/auth-svc/mail", "adminKeyFile": …,
/// "webURL": …}`. shopctl reads it only to tell people where things are — where a
/// verification email landed — so a missing or garbled record is no error: it is nil.
struct ComposeRecord: Decodable, Sendable, Equatable {
    /// The gateway's `host:port`.
    var gateway: String
    /// The directory auth-svc delivers its emails into, one `.eml` file each.
    var mailDir: String?
    /// The file holding the admin API key.
    var adminKeyFile: String?
    /// The web shop's URL.
    var webURL: String?

    /// The record in `paths`' base directory; nil when there is none or it cannot be read.
    static func load(paths: ConfigPaths) -> ComposeRecord? {
        load(from: paths.composeRecord)
    }

    /// The record in `file`; nil when the file is missing, unreadable or not such a record.
    static func load(from file: URL) -> ComposeRecord? {
        guard let data = try? Data(contentsOf: file) else { return nil }
        return try? JSONCodec.shared.decode(ComposeRecord.self, from: data)
    }

    /// Whether the gateway compose started is `gateway` (the one in use), however each is
    /// written — `host:port`, `http://host:port/`, a bare host (port 8080), any case — as
    /// ``GatewayAddress/parse(_:)`` reads them; an address it refuses serves nothing.
    func serves(gateway other: String) -> Bool {
        guard let recorded = try? GatewayAddress.parse(gateway), let used = try? GatewayAddress.parse(other) else {
            return false
        }
        return recorded.description.lowercased() == used.description.lowercased()
    }

    /// Where the email just sent is, and what to do with it — when compose's gateway is
    /// `gateway` and it recorded a mail directory; nil otherwise. `kind` names the email
    /// ("verification", "reset") and `command` the shopctl command that takes its token.
    func mailNote(gateway: String, kind: String, command: String) -> String? {
        guard serves(gateway: gateway), let mailDir, !mailDir.isEmpty else { return nil }
        return "The \(kind) email is in \(mailDir) (deploy/compose's mail directory): open the newest .eml and "
            + "follow its link, or run `\(command)`."
    }
}
