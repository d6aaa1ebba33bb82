import ArgumentParser
import RPC

/// A command line that does not parse, reported in shopctl's one error style: one line,
/// `error: what is wrong (see `shopctl COMMAND --help`)` — or, with `--json`, the JSON object
/// with code `INVALID_ARGUMENT` and reason `USAGE` — instead of ArgumentParser's usage block.
/// An unknown command word gets the command it is closest to, or the group that has a command
/// of that name ("did you mean `shopctl auth login`?").
enum UsageReport {
    /// The reason of every usage error.
    static let reason = "USAGE"

    /// The report of ArgumentParser's usage `error` for `arguments`, the command line as typed.
    static func report(for error: any Error, arguments: [String]) -> ErrorReport {
        let walk = CommandWalk(GlobalOptions.hoisted(arguments))
        let message: String
        if let unknown = walk.unknownWord {
            let suggestion = CommandWalk.suggestion(for: unknown, under: walk.command, path: walk.path).map { "; did you mean \($0)?" } ?? ""
            message = "Unknown command '\(unknown)' for `\(walk.path)`\(suggestion)"
        } else {
            message = Shopctl.usageMessage(for: error, arguments: arguments)
        }
        return ErrorReport(
            code: ExitStatus.usage.code.name, reason: reason, message: message, hint: "see `\(walk.path) --help`",
            status: .usage)
    }
}

/// How far a command line names commands: the deepest command its words name, and the first
/// word that should name a subcommand and does not.
struct CommandWalk {
    /// The deepest command named.
    let command: any ParsableCommand.Type
    /// Its full name, e.g. `shopctl basket set`.
    let path: String
    /// The word where a subcommand's name was expected and none has it; nil when there is none.
    let unknownWord: String?

    /// Walks `arguments` (global options hoisted) from the root command, stopping at the first
    /// option, at a command without subcommands, or at a word that names none of them.
    init(_ arguments: [String]) {
        var command: any ParsableCommand.Type = Shopctl.self
        var path = ["shopctl"]
        var unknown: String?
        for word in arguments {
            let subcommands = command.configuration.subcommands
            if word.hasPrefix("-") || subcommands.isEmpty || (path.count == 1 && word == "help") { break }
            guard let next = subcommands.first(where: { Self.names(of: $0).contains(word) }) else {
                unknown = word
                break
            }
            command = next
            path.append(next._commandName)
        }
        self.command = command
        self.path = path.joined(separator: " ")
        unknownWord = unknown
    }

    /// The name and aliases of `command`.
    static func names(of command: any ParsableCommand.Type) -> [String] {
        [command._commandName] + command.configuration.aliases
    }

    /// Every command below the root with its full name, breadth first (groups before theirs).
    static var allCommands: [(path: String, command: any ParsableCommand.Type)] {
        var found: [(path: String, command: any ParsableCommand.Type)] = []
        var queue: [(path: String, command: any ParsableCommand.Type)] = [("shopctl", Shopctl.self)]
        while !queue.isEmpty {
            let (path, command) = queue.removeFirst()
            for sub in command.configuration.subcommands {
                let entry = (path: "\(path) \(sub._commandName)", command: sub)
                found.append(entry)
                queue.append(entry)
            }
        }
        return found
    }

    /// What `word`, typed where one of `command`'s (named `path`) subcommands goes, most likely meant, as
    /// backquoted command lines: a command of exactly that name elsewhere (`login` →
    /// `shopctl auth login`; up to three when several groups have one), else the closest of
    /// `command`'s subcommands, else the closest command anywhere; nil when nothing is close.
    static func suggestion(for word: String, under command: any ParsableCommand.Type, path: String) -> String? {
        let all = allCommands
        let exact = all.filter { names(of: $0.command).contains(word) }.map { $0.path }
        if !exact.isEmpty {
            let shown = exact.prefix(3).map { "`\($0)`" }
            return shown.count == 1 ? shown[0] : "one of " + shown.joined(separator: ", ")
        }
        if let name = ClosestMatch.best(for: word, among: command.configuration.subcommands.map { $0._commandName }) {
            return "`\(path) \(name)`"
        }
        guard let name = ClosestMatch.best(for: word, among: all.map { $0.command._commandName }),
            let match = all.first(where: { $0.command._commandName == name })
        else { return nil }
        return "`\(match.path)`"
    }
}
