package import Foundation
internal import RPC

/// Where contract files live and how they are read and written: `Tests/Contracts/<consumer>/<provider>.json`,
/// JSON with sorted keys and two-space indents, so that a re-recorded contract differs from
/// the committed one only where the expectations changed.
///
/// Writes go through one actor, so tests recording into the same file at once do not lose
/// each other's interactions.
package enum ContractFiles {
    /// `Tests/Contracts` of this checkout, found from this source file's path.
    package static let directory: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Contracts")

    /// The file of the contract between `consumer` and `provider`.
    package static func url(consumer: String, provider: String, in directory: URL = directory) -> URL {
        directory.appendingPathComponent(consumer).appendingPathComponent("\(provider).json")
    }

    /// The contract between `consumer` and `provider`; nil when no file exists.
    package static func load(consumer: String, provider: String, in directory: URL = directory) throws -> Contract? {
        let url = url(consumer: consumer, provider: provider, in: directory)
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        return try load(url)
    }

    /// The contract in `url`.
    package static func load(_ url: URL) throws -> Contract {
        let contract: Contract
        do {
            contract = try JSONDecoder().decode(Contract.self, from: Data(contentsOf: url))
        } catch {
            throw ContractError("cannot read the contract \(url.path): \(error)")
        }
        guard contract.format == Contract.currentFormat else {
            throw ContractError("\(url.path) is in format \(contract.format); this code reads \(Contract.currentFormat)")
        }
        return contract
    }

    /// Every consumer with a contract naming `provider`, sorted.
    package static func consumers(of provider: String, in directory: URL = directory) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { FileManager.default.fileExists(atPath: url(consumer: $0, provider: provider, in: directory).path) }
            .sorted()
    }

    /// The canonical text of `contract`.
    package static func encode(_ contract: Contract) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        var data = try encoder.encode(contract)
        data.append(0x0A)
        return data
    }

    /// Writes `contract` to its file, creating the consumer's directory.
    package static func save(_ contract: Contract, in directory: URL = directory) throws {
        let url = url(consumer: contract.consumer, provider: contract.provider, in: directory)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try encode(contract).write(to: url, options: .atomic)
    }
}

/// Whether consumer tests check against the committed contracts or write them.
package enum ContractMode: Sendable, Equatable {
    /// Check the consumer against the committed contract; the default.
    case verify
    /// Write (or overwrite) the interactions the tests declare, with the requests the consumer sent.
    case record

    /// `record` when the environment has `CONTRACT_RECORD=1`.
    package static var current: ContractMode {
        ProcessInfo.processInfo.environment["CONTRACT_RECORD"] == "1" ? .record : .verify
    }
}

/// Serializes the read-modify-write of contract files by tests that record at the same time.
package actor ContractRecorder {
    /// The one recorder of this process.
    package static let shared = ContractRecorder()

    /// Replaces (or adds) `interactions` in the contract between `consumer` and `provider`,
    /// whose calls travel over `wire`, and writes it. Where the recorded example request still
    /// matches the new one under the new matchers (only a request id or a token's timestamps
    /// differ), the old example stays, so that re-recording an unchanged consumer leaves the
    /// file as it was.
    package func record(
        _ interactions: [Interaction], consumer: String, provider: String, wire: ContractWire = .grpc,
        in directory: URL = ContractFiles.directory
    ) throws {
        let old =
            try ContractFiles.load(consumer: consumer, provider: provider, in: directory)
            ?? Contract(consumer: consumer, provider: provider, interactions: [])
        let replaced = Set(interactions.map(\.description))
        let recorded = interactions.map { interaction in
            guard let previous = old.interaction(interaction.description) else { return interaction }
            return Self.keepingExample(of: previous, in: interaction)
        }
        try ContractFiles.save(
            Contract(
                consumer: consumer, provider: provider,
                interactions: old.interactions.filter { !replaced.contains($0.description) } + recorded, wire: wire),
            in: directory)
    }

    /// `interaction` with `previous`'s example request when that still matches.
    private static func keepingExample(of previous: Interaction, in interaction: Interaction) -> Interaction {
        var metadata = Metadata()
        for (name, value) in interaction.request.metadata { metadata.set(name, value) }
        var expectation = previous.request
        expectation.matchingRules = interaction.request.matchingRules
        guard Set(previous.request.metadata.keys) == Set(interaction.request.metadata.keys),
            previous.request.streamsRequests == interaction.request.streamsRequests,
            let mismatches = try? CallMatching.mismatches(
                of: metadata, messages: interaction.request.messages, against: expectation),
            mismatches.isEmpty
        else { return interaction }
        var kept = interaction
        kept.request.metadata = previous.request.metadata
        kept.request.messages = previous.request.messages
        return kept
    }

    /// Removes every interaction of the contract whose description is not in `kept`; returns
    /// the removed descriptions.
    package func prune(
        consumer: String, provider: String, keeping kept: Set<String>, in directory: URL = ContractFiles.directory
    ) throws -> [String] {
        guard let contract = try ContractFiles.load(consumer: consumer, provider: provider, in: directory) else { return [] }
        let removed = contract.interactions.map(\.description).filter { !kept.contains($0) }
        guard !removed.isEmpty else { return [] }
        try ContractFiles.save(
            Contract(
                consumer: consumer, provider: provider,
                interactions: contract.interactions.filter { kept.contains($0.description) }, wire: contract.wire),
            in: directory)
        return removed
    }
}
