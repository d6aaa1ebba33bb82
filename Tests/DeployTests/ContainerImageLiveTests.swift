import Foundation
import Testing

/// deploy/Dockerfile: one image holding every shipped executable, run as a non-root user
/// with its data in a volume. There is no docker here; the file is read, not built.
@Suite("Container image")
struct ContainerImageLiveTests {
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

    /// The variables the image sets (`ENV NAME=value …`, or the old `ENV NAME value`).
    static func environment() throws -> [String: String] {
        var variables: [String: String] = [:]
        for instruction in try instructions() where instruction.keyword == "ENV" {
            let words = instruction.arguments.split(whereSeparator: \.isWhitespace).map(String.init)
            guard let first = words.first else { continue }
            if !first.contains("=") {
                variables[first] = words.dropFirst().joined(separator: " ")
                continue
            }
            for word in words {
                let pair = word.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                variables[String(pair[0])] = pair.count > 1 ? String(pair[1]) : ""
            }
        }
        return variables
    }

    @Test("every SHOP_ variable the image sets is one each service's --help names: listen on all interfaces, data in the volume")
    func environmentNamesAreRead() async throws {
        let variables = try Self.environment()
        let names = variables.keys.filter { $0.hasPrefix("SHOP_") }.sorted()
        #expect(!names.isEmpty, "ENV sets no SHOP_ variable")
        let installed = try Self.installedExecutables()
        for service in StorefrontServices.names {
            try #require(installed.contains(service), "deploy/Dockerfile does not install \(service)")
            let help = try await ExecutableHelp.of(service)
            for name in names {
                #expect(help.environmentNames.contains(name), "\(service) --help names no \(name), so the image's ENV \(name) does nothing")
            }
        }
        #expect(variables["SHOP_HOST"] == "0.0.0.0")
        // `VOLUME ["/data"]` or `VOLUME /data`.
        let volumes = try Self.instructions().filter { $0.keyword == "VOLUME" }
            .flatMap { $0.arguments.split { $0.isWhitespace || "[],\"".contains($0) }.map(String.init) }
        #expect(variables["SHOP_DATA_DIR"].map(volumes.contains) == true, "SHOP_DATA_DIR is not one of the volumes \(volumes)")
    }

    @Test("EXPOSE lists exactly the services' ports, DESIGN.md's defaults that compose and the manifests use")
    func exposesTheServicePorts() throws {
        let exposed = try Self.instructions().filter { $0.keyword == "EXPOSE" }
            .flatMap { $0.arguments.split(whereSeparator: \.isWhitespace) }
            .map { String($0.hasSuffix("/tcp") ? $0.dropLast("/tcp".count) : $0) }
        #expect(exposed.sorted() == StorefrontServices.all.map { String($0.port) }.sorted(), "EXPOSE \(exposed)")
    }

    @Test("the image holds every executable target of Package.swift but bench-server and the example")
    func copiesEveryExecutable() throws {
        let installed = try Self.installedExecutables()
        let shipped = try Repository.shippedExecutables()
        #expect(!shipped.isEmpty)
        for executable in shipped {
            #expect(installed.contains(executable), "deploy/Dockerfile does not install \(executable)")
        }
        for left in Repository.notShipped { #expect(!installed.contains(left)) }
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
        #expect(runs.contains { $0.contains("libnghttp2-14") && $0.contains("libsqlite3-0") && $0.contains("libpq5") })
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
