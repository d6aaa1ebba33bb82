import Foundation
import ServiceTestSupport
import Testing

/// The web storefront in a real browser (issue 26, point 7): `deploy/compose up` starts the
/// system from this build's executables, and `Tests/Browser/storefront_journey.py` drives
/// headless Chromium through Selenium — sign up, the mailed verification link, sign in, search,
/// two products in the basket, the basket changed live by `shopctl` from outside, a declined and
/// a paid order, the history and a cancel, the password reset by the mailed link, a phone's
/// screen. A failure keeps a screenshot, the page and the browser's console, and names them.
@Suite("End to end: a shopper's journey through the web storefront in headless Chromium", .serialized)
struct BrowserJourneyLiveTests {
    /// The journey script, found from this file's path.
    static let script = ComposeSystem.repository.appendingPathComponent("Tests/Browser/storefront_journey.py")

    /// What deploy/requirements.sh installs for this test (`ensure_requirements test`).
    static let installHint = "sudo apt-get install -y chromium chromium-driver python3-selenium"

    @Test("sign up, verify by mail, sign in, search, a basket shopctl changes live, declined and paid orders, cancel, reset the password")
    func journey() async throws {
        guard let tools = try await BrowserTools.find() else { return }
        let output = ComposeSystem.repository.appendingPathComponent(".build/test-output/browser-journey")
            .appendingPathComponent("\(Self.timestamp())-\(UUID().uuidString.prefix(8).lowercased())")
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)

        var result: Command.Result?
        try await withComposeSystem { system in
            let up = try await system.run("up")
            try #require(up.status == 0, "up failed: \(up)")
            let port = try #require(system.ports["gateway"])
            let shopctl = ShopctlRunner(configHome: system.scratch.appendingPathComponent("probe"), gateway: "127.0.0.1:\(port)")
            try await shopctl.waitUntilServing()
            result = try await Command.run(
                tools.python,
                [
                    Self.script.path, "--base-url", "http://127.0.0.1:\(port)", "--gateway", "127.0.0.1:\(port)",
                    "--mail-dir", system.data.appendingPathComponent("auth-svc/mail").path,
                    "--shopctl", ServiceProcess.executable("shopctl").path, "--output", output.path,
                    "--chromium", tools.chromium, "--chromedriver", tools.chromedriver,
                ],
                timeout: .seconds(300))
        }

        let finished = try #require(result)
        let lines = finished.output.split(separator: "\n").map(String.init)
        let artifacts = lines.filter { $0.hasPrefix("ARTIFACT ") }.map { String($0.dropFirst("ARTIFACT ".count)) }
        if finished.status == 0 && lines.last?.hasPrefix("PASSED") == true {
            try? FileManager.default.removeItem(at: output)
            return
        }
        let failure = lines.first { $0.hasPrefix("FAILED ") } ?? "the script exited \(finished.status)"
        Issue.record(
            """
            \(failure)
            screenshot, page and browser console: \(artifacts.isEmpty ? output.path : artifacts.joined(separator: ", "))
            steps: \(lines.filter { $0.hasPrefix("STEP ") }.map { $0.dropFirst(5) }.joined(separator: " → "))
            --- stderr (last 40 lines)
            \(finished.errors.split(separator: "\n").suffix(40).joined(separator: "\n"))
            """)
        print("browser journey artifacts:\n" + (artifacts.isEmpty ? [output.path] : artifacts).map { "  \($0)" }.joined(separator: "\n"))
    }

    /// `20261127-133546`, so that output directories sort by time.
    static func timestamp() -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        return formatter.string(from: Date())
    }
}

/// Chromium, its WebDriver and a Python with Selenium — Debian's packages.
struct BrowserTools {
    let python: String
    let chromium: String
    let chromedriver: String

    /// The tools, or nil after recording an issue that says what to install: missing tools fail
    /// the test rather than skip it (`Tests/run` installs them).
    static func find(sourceLocation: SourceLocation = #_sourceLocation) async throws -> BrowserTools? {
        let chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first(where: FileManager.default.isExecutableFile(atPath:))
        let chromedriver = ["/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver"].first(where: FileManager.default.isExecutableFile(atPath:))
        // Debian's python3-selenium is for Debian's python3; a python3 earlier on PATH (pyenv,
        // a virtualenv) may not see it.
        var python: String?
        for candidate in ["/usr/bin/python3", "python3"] {
            let probe = try? await Command.run(candidate, ["-c", "import selenium"], timeout: .seconds(30))
            if probe?.status == 0 {
                python = candidate
                break
            }
        }
        guard let chromium, let chromedriver, let python else {
            let missing = [chromium == nil ? "chromium" : nil, chromedriver == nil ? "chromedriver" : nil, python == nil ? "python3 with selenium" : nil]
                .compactMap { $0 }.joined(separator: ", ")
            Issue.record(
                "the browser test needs \(missing); install with `\(BrowserJourneyLiveTests.installHint)` (Tests/run does it when run as root)",
                sourceLocation: sourceLocation)
            return nil
        }
        return BrowserTools(python: python, chromium: chromium, chromedriver: chromedriver)
    }
}
