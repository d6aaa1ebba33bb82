import Foundation
import ServiceTestSupport
import Testing

/// The Linux command-line example (`Examples/ShopperJourney`) run as a shopper would run it,
/// against the live stack: it must get through every step of its journey.
@Suite("StorefrontKit example: a shopper's journey, live")
struct ShopperJourneyLiveTests {
    @Test("shopper-journey signs up, verifies, browses, watches its basket, pays and signs out, exiting 0")
    func wholeJourney() async throws {
        try await withKitStack { kit in
            let mail = kit.stack.dataDirectory(.auth).appendingPathComponent("mail").path
            let (status, output) = try await Self.run(
                "shopper-journey", arguments: ["--gateway", try kit.baseURL.absoluteString, "--mail-dir", mail])
            #expect(status == 0, "\(output)")
            for step in ["sign up", "verify the email", "sign in", "categories", "first page of", "search", "favour",
                         "add it to the basket, watching the basket live", "place the order", "the basket after paying: empty",
                         "my orders", "sign out: signed out"] {
                #expect(output.contains("✓ \(step)"), "no line for '\(step)' in:\n\(output)")
            }
            #expect(output.contains("journey complete"))
        }
    }

    @Test("shopper-journey refuses an unknown option with its usage, exiting 1")
    func usage() async throws {
        let (status, output) = try await Self.run("shopper-journey", arguments: ["--nope", "x"])
        #expect(status == 1)
        #expect(output.contains("unknown option --nope") && output.contains("usage: shopper-journey"), "\(output)")
    }

    /// Runs the built executable `name` to its end (waiting off the cooperative pool, in the
    /// process's termination handler); returns its exit status and its output and errors.
    static func run(_ name: String, arguments: [String]) async throws -> (Int32, String) {
        let executable = ServiceProcess.executable(name)
        try #require(FileManager.default.isExecutableFile(atPath: executable.path), "build it first: swift build --build-tests")
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let output = try TestScratch.makeDirectory(prefix: "journey").appendingPathComponent("output.txt")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let handle = try FileHandle(forWritingTo: output)
        process.standardOutput = handle
        process.standardError = handle
        // A journey that hangs is stopped (SIGTERM) rather than holding the suite.
        let watchdog = Task { [process] in
            guard (try? await Task.sleep(for: .seconds(180))) != nil else { return }
            if process.isRunning { process.terminate() }
        }
        defer { watchdog.cancel() }
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do { try process.run() } catch { continuation.resume(throwing: error) }
        }
        try handle.close()
        return (status, String(decoding: try Data(contentsOf: output), as: UTF8.self))
    }
}
