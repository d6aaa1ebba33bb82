import RPC
package import Testing
package import JSON

/// How one interaction fared against the provider.
package struct InteractionResult: Sendable {
    /// The interaction.
    package let interaction: Interaction
    /// What kept it from being checked: a missing state hook, a failed setup, a bad contract.
    package var problems: [String] = []
    /// The request message as replayed (generators applied).
    package var sent: JSONValue?
    /// What the provider answered.
    package var outcome: CallOutcome?
    /// How the answer differs from the contract.
    package var mismatches: [Mismatch] = []

    /// Whether the provider honoured the interaction.
    package var passed: Bool { problems.isEmpty && mismatches.isEmpty && outcome != nil }
}

/// The verification of one contract against its provider, readable as a report.
package struct VerificationReport: Sendable, CustomStringConvertible {
    /// The consumer whose contract it is.
    package let consumer: String
    /// The provider verified.
    package let provider: String
    /// One result per interaction, in the contract's order.
    package let results: [InteractionResult]

    /// The interactions the provider did not honour.
    package var failures: [InteractionResult] { results.filter { !$0.passed } }

    /// Whether every interaction passed.
    package var passed: Bool { failures.isEmpty }

    /// The report: one line per interaction, with a diff under each failed one.
    package var description: String {
        var lines = [
            "\(provider) against the contract of \(consumer) (Tests/Contracts/\(consumer)/\(provider).json): "
                + "\(failures.count) of \(results.count) interactions failed"
        ]
        for result in results {
            var given =
                result.interaction.providerStates.isEmpty
                ? "" : " given " + result.interaction.providerStates.map(\.description).joined(separator: ", ")
            if case .stream(let stream) = result.interaction.response, !stream.midStreamStates.isEmpty {
                given += ", then mid-stream " + stream.midStreamStates.map(\.description).joined(separator: ", ")
            }
            lines.append("  \(result.passed ? "ok  " : "FAIL") \"\(result.interaction.description)\"\(given)")
            guard !result.passed else { continue }
            lines.append(
                "         request  \(result.interaction.request.path) \(result.sent.map { JSONText.compact($0) } ?? "(not sent)")")
            if let outcome = result.outcome { lines.append("         answered \(outcome.summary)") }
            for problem in result.problems { lines.append("         problem  \(problem)") }
            for mismatch in result.mismatches {
                lines.append("         \(mismatch.path)")
                lines.append("             expected \(mismatch.expected)")
                lines.append("             actual   \(mismatch.actual)")
            }
        }
        return lines.joined(separator: "\n")
    }

    /// Records the report as an issue of the running test when an interaction failed.
    package func expectPassed(sourceLocation: SourceLocation = #_sourceLocation) {
        if !passed { Issue.record("\(self)", sourceLocation: sourceLocation) }
    }
}
