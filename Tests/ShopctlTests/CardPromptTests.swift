import ArgumentParser
import Contracts
import Foundation
import ServiceTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

@testable import shopctl

/// `order place` without `--card`: the number is typed at a prompt that does not echo it, or
/// piped in with `--card-stdin`; it never needs to be a command-line argument.
@Suite("order place: the card number at a no-echo prompt or from standard input")
struct CardPromptTests {
    private static let address = [
        "--name", "Ada", "--line1", "1 Main St", "--city", "Springfield", "--postal-code", "12345", "--country", "US",
    ]
    private static let expiryAndCode = ["--exp", "12/30", "--cvc", "123"]

    /// Runs `body` with a process context of an empty config home and `input` on standard input.
    private func withContext<Result>(input: String = "", _ body: () throws -> Result) throws -> Result {
        let home = try TestScratch.makeDirectory(prefix: "shopctl-card")
        defer { try? FileManager.default.removeItem(at: home) }
        let context = ProcessContext(
            environment: ["XDG_CONFIG_HOME": home.path, "HOME": home.path], readStandardInput: { Data(input.utf8) },
            writeStandardOutput: { _ in })
        return try ProcessContext.$current.withValue(context, operation: body)
    }

    /// `order place` parsed (and validated) from `arguments`.
    private func place(_ arguments: [String]) throws -> OrderCommand.Place {
        try #require(try Shopctl.parseAsRoot(["order", "place"] + arguments) as? OrderCommand.Place)
    }

    @Test("without --card the command line is accepted, and --card-stdin supplies the number")
    func cardFromStandardInput() throws {
        let request = try withContext(input: "4242 4242 4242 4242\n") {
            let command = try place(Self.address + Self.expiryAndCode + ["--card-stdin"])
            return try command.request(try command.completed(command.input))
        }
        #expect(request.payment == CardDetails(cardNumber: "4242424242424242", expMonth: 12, expYear: 2030, cvc: "123"))
        _ = try withContext { try place(Self.address + Self.expiryAndCode) }
    }

    @Test("a bad number read from standard input is refused without repeating it")
    func badNumberNotEchoed() throws {
        let thrown = #expect(throws: ValidationError.self) {
            try withContext(input: "4242-99\n") {
                let command = try place(Self.address + Self.expiryAndCode + ["--card-stdin"])
                return try command.request(try command.completed(command.input))
            }
        }
        #expect(thrown?.message == "The card number must be 12 to 19 digits.")
        let empty = #expect(throws: ShopctlError.self) {
            try withContext(input: "") {
                let command = try place(Self.address + Self.expiryAndCode + ["--card-stdin"])
                return try command.completed(command.input)
            }
        }
        #expect(empty?.message.contains("card number") == true)
        #expect(empty?.hint?.contains("--card-stdin") == true)
    }

    @Test("--card-stdin with --card is a usage error; the rest is still checked before any prompt")
    func validation() throws {
        #expect(throws: (any Error).self) {
            try withContext { try place(Self.address + Self.expiryAndCode + ["--card-stdin", "--card", "4242424242424242"]) }
        }
        #expect(throws: (any Error).self) { try withContext { try place(Self.address + ["--exp", "13/30", "--cvc", "123"]) } }
        #expect(throws: (any Error).self) { try withContext { try place(Self.expiryAndCode) } }
    }

    @Test("the prompt reads a line from the terminal with echo off, and puts echo back")
    func promptDoesNotEcho() throws {
        let pty = try #require(PseudoTerminal())
        let (master, terminal) = (pty.master, pty.terminal)
        defer { pty.close() }
        var before = termios()
        #expect(tcgetattr(terminal, &before) == 0)
        #expect(before.c_lflag & tcflag_t(ECHO) != 0)

        let answer = Mutex<String?>(nil)
        let finished = DispatchSemaphore(value: 0)
        Thread {
            answer.withLock { $0 = try? TerminalPrompt.readSecret("Card number: ", terminal: terminal) }
            finished.signal()
        }.start()
        var shown = Self.read(master, until: { $0.contains("Card number: ") })
        #expect(shown.contains("Card number: "))
        _ = "4242 4242 4242 4242\n".withCString { write(master, $0, strlen($0)) }
        #expect(finished.wait(timeout: .now() + 10) == .success)
        shown += Self.read(master, until: { _ in false }, within: 0.3)
        #expect(answer.withLock { $0 } == "4242 4242 4242 4242")
        #expect(shown.range(of: "4242") == nil, "the terminal showed: \(Array(shown.utf8))")
        var after = termios()
        #expect(tcgetattr(terminal, &after) == 0)
        #expect(after.c_lflag & tcflag_t(ECHO) != 0)
    }

    /// What `master` gives until `done` holds of all of it or `seconds` pass.
    private static func read(_ master: Int32, until done: (String) -> Bool, within seconds: Double = 10) -> String {
        var bytes: [UInt8] = []
        let deadline = Date().addingTimeInterval(seconds)
        while !done(String(decoding: bytes, as: UTF8.self)), Date() < deadline {
            var poller = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 50) > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 256)
            let count = Glibc.read(master, &buffer, buffer.count)
            if count > 0 { bytes += buffer.prefix(count) }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
