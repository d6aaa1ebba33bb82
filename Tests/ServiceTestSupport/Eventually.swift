/// Polls `condition` every `interval` (the first time at once) until it holds or `limit`
/// passes, then once more; returns whether it came to hold. For effects that happen just after
/// an answer or in the background: a log line, a health round, a restart, a recovery pass.
/// Conditions that make calls poll less often (`interval`) so as not to flood what they watch.
package func eventually(
    within limit: Duration = .seconds(5), every interval: Duration = .milliseconds(20),
    _ condition: () async throws -> Bool
) async rethrows -> Bool {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: interval)
    }
    return try await condition()
}
