import ArgumentParser
import Foundation
import ServiceTestSupport
import Testing

@testable import shopctl

/// Each command group's `--help` ends its overview with a few real command lines to copy.
@Suite("group help: examples that parse")
struct GroupHelpTests {
    /// The examples of `help`: the lines after "Examples:" that start with `shopctl`, each
    /// joined with the lines its trailing backslash continues. The first line that is not one
    /// ends them, so a line in the list that is not a command (`export …`, `…`) hides every
    /// example after it — and fails the count below.
    static func examples(in help: String) -> [String] {
        guard let start = help.range(of: "Examples:\n") else { return [] }
        var examples: [String] = []
        var continuing = false
        for line in help[start.upperBound...].split(separator: "\n", omittingEmptySubsequences: false) {
            let text = line.trimmingCharacters(in: .whitespaces)
            if continuing, let last = examples.popLast() {
                examples.append(last + " " + text)
            } else if text.hasPrefix("shopctl ") {
                examples.append(text)
            } else {
                break
            }
            continuing = examples.last?.hasSuffix("\\") == true
            if continuing, let last = examples.popLast() { examples.append(String(last.dropLast()).trimmingCharacters(in: .whitespaces)) }
        }
        return examples
    }

    /// The words of a shell command line as the shell hands them to shopctl: double and single
    /// quotes group, and the command ends at an unquoted `#` (a comment), `|` (the rest of a
    /// pipeline is another program) or `<`/`>` (a redirection, not an argument).
    static func words(_ line: String) -> [String] {
        var words: [String] = []
        var current: String?
        var quote: Character?
        for character in line {
            if let open = quote {
                if character == open { quote = nil } else { current?.append(character) }
            } else if character == "\"" || character == "'" {
                quote = character
                current = current ?? ""
            } else if character == " " {
                if let word = current { words.append(word) }
                current = nil
            } else if "#|<>".contains(character) {
                break
            } else {
                current = (current ?? "") + String(character)
            }
        }
        if let word = current { words.append(word) }
        return words
    }

    /// Every command whose help lists examples — the top level (`group` nil), each group, and
    /// `admin products import` — with how many examples it should have.
    static let commands: [(group: String?, command: any ParsableCommand.Type, count: ClosedRange<Int>)] = [
        (nil, Shopctl.self, 4...8), ("auth", AuthCommand.self, 2...5), ("basket", BasketCommand.self, 2...5),
        ("order", OrderCommand.self, 2...5), ("favorites", FavoritesCommand.self, 2...5), ("admin", AdminCommand.self, 2...5),
        ("admin", AdminCommand.Products.Import.self, 2...5), ("config", ConfigCommand.self, 2...5),
        ("call", CallCommand.self, 2...5), ("describe", DescribeCommand.self, 2...5), ("top", TopCommand.self, 2...5),
    ]

    /// The help of `command` as an 80-column terminal shows it: a longer example line would be
    /// wrapped there, and the copy would not parse.
    static func help(_ command: any ParsableCommand.Type) -> String {
        Shopctl.helpMessage(for: command, columns: 80)
    }

    @Test("every help with an \"Examples:\" list is in the table above: none goes unchecked")
    func everyHelpWithExamplesIsChecked() {
        let checked = Set(Self.commands.map { ObjectIdentifier($0.command) })
        var unchecked: [String] = []
        func visit(_ command: any ParsableCommand.Type) {
            if Self.help(command).contains("Examples:") && !checked.contains(ObjectIdentifier(command)) {
                unchecked.append(command._commandName)
            }
            command.configuration.subcommands.forEach(visit)
        }
        visit(Shopctl.self)
        #expect(unchecked.isEmpty, "\(unchecked)")
    }

    @Test("the examples are whole shell lines: no `…`, no `export`, no card number on the command line")
    func examplesAreCopyable() {
        for (group, command, _) in Self.commands {
            let help = Self.help(command)
            let list = help[(help.range(of: "Examples:\n")?.upperBound ?? help.endIndex)...]
            let block = list.split(separator: "\n\n", maxSplits: 1).first.map(String.init) ?? ""
            #expect(!block.contains("…") && !block.contains("export "), "\(group ?? "shopctl"): \(block)")
            #expect(!block.contains("--card "), "\(group ?? "shopctl"): \(block)")
        }
    }

    @Test("has a few examples of its own commands, each of which parses", arguments: 0..<commands.count)
    func examples(index: Int) throws {
        let (group, command, count) = Self.commands[index]
        let help = Self.help(command)
        let examples = Self.examples(in: help)
        #expect(count.contains(examples.count), "\(help)")
        let home = try TestScratch.makeDirectory(prefix: "shopctl-help")
        defer { try? FileManager.default.removeItem(at: home) }
        // The admin key is set, as admin's help says to export it once before its examples (an
        // admin command refuses to parse without one).
        let context = ProcessContext(
            environment: ["XDG_CONFIG_HOME": home.path, "HOME": home.path, "SHOP_ADMIN_API_KEY": "admin-key"],
            readStandardInput: { Data() }, writeStandardOutput: { _ in })
        if let group {
            #expect(examples.contains { Self.words($0).dropFirst().first == group }, "\(group): \(examples)")
        }
        for example in examples {
            let words = Self.words(example)
            #expect(words.first == "shopctl", "\(example)")
            // As `Shopctl.main` parses: the global options may come before the subcommand.
            #expect(throws: Never.self, "\(example)") {
                try ProcessContext.$current.withValue(context) {
                    _ = try Shopctl.parseAsRoot(GlobalOptions.hoisted(Array(words.dropFirst())))
                }
            }
        }
    }
}
