import ArgumentParser
import Foundation
import ServiceTestSupport
import Testing

@testable import shopctl

/// Each command group's `--help` ends its overview with a few real command lines to copy.
@Suite("group help: examples that parse")
struct GroupHelpTests {
    /// The examples of `help`: the lines after "Examples:" that start with `shopctl`, each
    /// joined with the lines its trailing backslash continues.
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

    /// The words of a command line, double quotes grouping (as the examples use them).
    static func words(_ line: String) -> [String] {
        var words: [String] = []
        var current = ""
        var quoted = false
        for character in line {
            if character == "\"" {
                quoted.toggle()
            } else if character == " " && !quoted {
                if !current.isEmpty { words.append(current) }
                current = ""
            } else {
                current.append(character)
            }
        }
        if !current.isEmpty { words.append(current) }
        return words
    }

    @Test(
        "has 2 to 4 examples of its own commands, each of which parses",
        arguments: [
            ("auth", AuthCommand.helpMessage()), ("basket", BasketCommand.helpMessage()),
            ("order", OrderCommand.helpMessage()), ("favorites", FavoritesCommand.helpMessage()),
        ] as [(String, String)])
    func examples(group: String, help: String) throws {
        let examples = Self.examples(in: help)
        #expect((2...4).contains(examples.count), "\(help)")
        let home = try TestScratch.makeDirectory(prefix: "shopctl-help")
        defer { try? FileManager.default.removeItem(at: home) }
        let context = ProcessContext(
            environment: ["XDG_CONFIG_HOME": home.path, "HOME": home.path], readStandardInput: { Data() },
            writeStandardOutput: { _ in })
        for example in examples {
            let words = Self.words(example)
            #expect(words.dropFirst().first == group, "\(example)")
            #expect(throws: Never.self, "\(example)") {
                try ProcessContext.$current.withValue(context) { _ = try Shopctl.parseAsRoot(Array(words.dropFirst())) }
            }
        }
    }
}
