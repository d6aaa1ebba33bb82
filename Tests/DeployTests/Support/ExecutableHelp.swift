import Foundation
import ServiceTestSupport
import Testing

/// What a built executable says it accepts, from its own `--help`: the options it lists and
/// the environment variables its help names (`(env SHOP_PORT)`, and libpq's `PGPASSWORD`).
struct ExecutableHelp: Sendable {
    /// The executable's name.
    let name: String
    /// The whole `--help` text.
    let text: String
    /// Every option of the OPTIONS section, e.g. `--port`.
    let flags: Set<String>
    /// Every `SHOP_…` name in the text, and every libpq variable (`PG…`) it names.
    let environmentNames: Set<String>

    /// Parses `text`, the `--help` output of `name`.
    init(name: String, text: String) {
        self.name = name
        self.text = text
        // An option line starts with two spaces and the option (after a short form such as
        // `-h, `); wrapped help text is indented further, so a flag named inside a sentence
        // is not taken for one.
        var flags: Set<String> = []
        for line in text.split(separator: "\n") {
            if let match = line.wholeMatch(of: #/  (?:-[A-Za-z], )?(--[a-z0-9][a-z0-9-]*)\b.*/#) {
                flags.insert(String(match.output.1))
            }
        }
        self.flags = flags
        environmentNames = Set(text.matches(of: #/\b(?:SHOP_[A-Z0-9_]+|PG[A-Z]+)\b/#).map { String($0.output) })
    }

    /// Runs the built executable `name` (next to the test bundle) with `--help`.
    static func of(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> ExecutableHelp {
        let executable = ServiceProcess.executable(name)
        try #require(
            FileManager.default.isExecutableFile(atPath: executable.path),
            "build it first: swift build --build-tests (\(executable.path))", sourceLocation: sourceLocation)
        let result = try await Command.run(executable.path, ["--help"], timeout: .seconds(30))
        try #require(result.status == 0, "\(name) --help failed: \(result)", sourceLocation: sourceLocation)
        return ExecutableHelp(name: name, text: result.output + result.errors)
    }

    /// Whether the help lists `flag` (`--name`).
    func accepts(_ flag: String) -> Bool { flags.contains(flag) }
}
