import Foundation
import Testing

/// deploy/Dockerfile: one image holding every shipped executable, run as a non-root user
/// with its data in a volume. There is no docker here; the file is read, not built.
@Suite("Container image")
struct ContainerImageTests {
    /// The Dockerfile's instructions, with continuation lines joined and comments dropped.
    static func instructions() throws -> [(keyword: String, arguments: String)] {
        let text = try Repository.text("deploy/Dockerfile")
        var instructions: [(String, String)] = []
        var pending = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("#") && pending.isEmpty { continue }
            if trimmed.hasSuffix("\\") {
                pending += trimmed.dropLast() + " "
                continue
            }
            let whole = (pending + trimmed).trimmingCharacters(in: .whitespaces)
            pending = ""
            guard !whole.isEmpty else { continue }
            let keyword = whole.prefix { !$0.isWhitespace }
            instructions.append((keyword.uppercased(), whole.dropFirst(keyword.count).trimmingCharacters(in: .whitespaces)))
        }
        return instructions
    }

    /// The executables the build stage installs: the default of `ARG EXECUTABLES`.
    static func installedExecutables() throws -> [String] {
        let argument = try #require(
            try instructions().first { $0.keyword == "ARG" && $0.arguments.hasPrefix("EXECUTABLES=") }?.arguments,
            "deploy/Dockerfile has no ARG EXECUTABLES=\"…\"")
        return argument.dropFirst("EXECUTABLES=".count).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            .split(separator: " ").map(String.init)
    }

    @Test("the image holds every executable target of Package.swift but bench-server")
    func copiesEveryExecutable() throws {
        let installed = try Self.installedExecutables()
        let shipped = try Repository.shippedExecutables()
        #expect(!shipped.isEmpty)
        for executable in shipped {
            #expect(installed.contains(executable), "deploy/Dockerfile does not install \(executable)")
        }
        #expect(!installed.contains("bench-server"))
        let instructions = try Self.instructions()
        // The build stage installs $EXECUTABLES into /staging/bin, the runtime stage copies it.
        #expect(instructions.contains { $0.keyword == "RUN" && $0.arguments.contains("for executable in $EXECUTABLES") && $0.arguments.contains("/staging/bin") })
        #expect(instructions.contains { $0.keyword == "COPY" && $0.arguments.hasPrefix("--from=build /staging/bin/") })
    }

    @Test("two stages: a Swift build with nghttp2 and SQLite, a slim runtime with their libraries")
    func buildsInTwoStages() throws {
        let instructions = try Self.instructions()
        let stages = instructions.filter { $0.keyword == "FROM" }.map(\.arguments)
        try #require(stages.count == 2, "stages: \(stages)")
        #expect(stages[0].hasPrefix("swift:") && stages[0].hasSuffix(" AS build"), "build stage: \(stages[0])")
        #expect(stages[1].contains("slim") || stages[1].hasPrefix("ubuntu"), "runtime stage: \(stages[1])")
        let runs = instructions.filter { $0.keyword == "RUN" }.map(\.arguments)
        #expect(runs.contains { $0.contains("libnghttp2-dev") && $0.contains("libsqlite3-dev") })
        #expect(runs.contains { $0.contains("swift build -c release") && $0.contains("--static-swift-stdlib") })
        #expect(runs.contains { $0.contains("libnghttp2-14") && $0.contains("libsqlite3-0") })
    }

    @Test("it runs as a non-root user with /data as a volume, and its command names an executable")
    func runsAsNonRootWithDataVolume() throws {
        let instructions = try Self.instructions()
        let user = try #require(instructions.last { $0.keyword == "USER" }?.arguments, "no USER")
        #expect(!["root", "0", "0:0"].contains(user), "runs as \(user)")
        #expect(Int(user.split(separator: ":").first ?? "") != nil, "USER \(user) is not numeric, so runAsNonRoot cannot check it")
        #expect(instructions.contains { $0.keyword == "VOLUME" && $0.arguments.contains("/data") })
        let installed = try Self.installedExecutables()
        let entry = instructions.last { $0.keyword == "ENTRYPOINT" || $0.keyword == "CMD" }
        let command = try #require(entry?.arguments, "no ENTRYPOINT or CMD")
        let words = try JSONDecoder().decode([String].self, from: Data(command.utf8))
        #expect(words.first.map(installed.contains) == true, "\(entry?.keyword ?? "") \(command) names no installed executable")
    }
}
