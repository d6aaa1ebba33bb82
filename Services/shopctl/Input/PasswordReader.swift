import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Reads passwords — and other secrets, such as `order place`'s card number: from standard
/// input with `--password-stdin` (one per line, for scripts, like `docker login`), or from a
/// prompt on the terminal with echo turned off. Secrets are best kept off the command line,
/// which every user of the machine can see in the process list.
struct PasswordReader {
    /// Whether `--password-stdin` (or `flag`) was given.
    let fromStandardInput: Bool
    /// What is read, for messages: "password", "card number".
    let noun: String
    /// The flag that pipes it in instead of prompting.
    let flag: String
    /// The lines of standard input, read on first use.
    private var lines: [String]?
    /// How many of `lines` were used.
    private var used = 0

    /// A reader of `noun`s for `flag` (`--password-stdin` by default) or the terminal.
    init(fromStandardInput: Bool, noun: String = "password", flag: String = "--password-stdin") {
        self.fromStandardInput = fromStandardInput
        self.noun = noun
        self.flag = flag
    }

    /// A reader over `input` (tests), as `--password-stdin` would read it.
    init(standardInput input: String, noun: String = "password", flag: String = "--password-stdin") {
        self.init(fromStandardInput: true, noun: noun, flag: flag)
        lines = Self.split(input)
    }

    /// The next password: the next line of standard input, or what is typed after `prompt`.
    mutating func read(prompt: String) throws(ShopctlError) -> String {
        let password: String
        if fromStandardInput {
            if lines == nil {
                lines = Self.split(String(decoding: ProcessContext.current.readStandardInput(), as: UTF8.self))
            }
            guard let lines, used < lines.count else {
                throw .usage("Standard input ended before the \(noun) (\(prompt.lowercased())).",
                    hint: "with \(flag) give one \(noun) per line")
            }
            password = lines[used]
            used += 1
        } else {
            password = try TerminalPrompt.readSecret(prompt + ": ", noun: noun, flag: flag)
        }
        guard !password.isEmpty else { throw .usage("The \(noun) is empty.") }
        return password
    }

    /// A new password: from standard input once, or typed twice at the terminal and compared.
    mutating func readNew(prompt: String) throws(ShopctlError) -> String {
        let password = try read(prompt: prompt)
        if !fromStandardInput {
            let again = try TerminalPrompt.readSecret("Repeat it: ", noun: noun, flag: flag)
            guard again == password else { throw .usage("The two \(noun)s differ.") }
        }
        return password
    }

    /// `text` split into lines (LF or CRLF), a trailing newline not making an extra line.
    private static func split(_ text: String) -> [String] {
        // `isNewline` takes "\r\n", which Swift reads as one Character, as well as "\n".
        var lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).map(String.init)
        if lines.last == "" { lines.removeLast() }
        return lines
    }
}

/// The controlling terminal, for reading a secret without echo (termios: `ECHO` off,
/// `ECHONL` on so the Enter still shows), restored afterwards — also when Ctrl-C interrupts.
enum TerminalPrompt {
    /// Prints `prompt` on the controlling terminal and reads one line without echo; a usage
    /// error naming `flag` when standard input is not a terminal (a script must pipe the
    /// `noun` in instead).
    static func readSecret(
        _ prompt: String, noun: String = "password", flag: String = "--password-stdin"
    ) throws(ShopctlError) -> String {
        guard isatty(STDIN_FILENO) == 1 else {
            throw .usage(
                "Standard input is not a terminal, so the \(noun) cannot be prompted for.",
                hint: "pipe it in with \(flag)")
        }
        let terminal = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard terminal >= 0 else { throw .local("Cannot open /dev/tty: \(String(cString: strerror(errno))).") }
        defer { close(terminal) }
        return try readSecret(prompt, terminal: terminal)
    }

    /// Prints `prompt` on `terminal` (an open terminal device) and reads one line from it with
    /// echo off, putting the terminal's settings back afterwards.
    static func readSecret(_ prompt: String, terminal: Int32) throws(ShopctlError) -> String {
        var original = termios()
        guard tcgetattr(terminal, &original) == 0 else {
            throw .local("Cannot read the terminal's settings: \(String(cString: strerror(errno))).")
        }
        var silent = original
        silent.c_lflag &= ~tcflag_t(ECHO)
        silent.c_lflag |= tcflag_t(ECHONL)
        InterruptedPrompt.arm(terminal: terminal, settings: original)
        defer { InterruptedPrompt.disarm() }
        guard tcsetattr(terminal, TCSAFLUSH, &silent) == 0 else {
            throw .local("Cannot turn off the terminal's echo: \(String(cString: strerror(errno))).")
        }
        defer { tcsetattr(terminal, TCSAFLUSH, &original) }
        // The prompt only once echo is off: what is typed after it is neither shown nor
        // discarded by the flush above.
        _ = prompt.withCString { write(terminal, $0, strlen($0)) }
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let count = read(terminal, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 || byte == UInt8(ascii: "\n") { break }
            bytes.append(byte)
        }
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Restores the terminal if SIGINT arrives while echo is off, then exits 130 as the shell
/// expects of a process that Ctrl-C ended. The handler only calls async-signal-safe functions.
private enum InterruptedPrompt {
    // Written only with SIGINT's default disposition in force (before `arm` installs the
    // handler, after `disarm` removes it), so the handler never sees a half-written value.
    /// The terminal the prompt is on.
    nonisolated(unsafe) static var terminal: Int32 = -1
    /// Its settings before echo was turned off.
    nonisolated(unsafe) static var settings = termios()

    /// Installs the handler for a prompt on `terminal`, whose settings before the prompt were `settings`.
    static func arm(terminal: Int32, settings: termios) {
        self.terminal = terminal
        self.settings = settings
        signal(SIGINT) { _ in
            tcsetattr(InterruptedPrompt.terminal, TCSAFLUSH, &InterruptedPrompt.settings)
            _exit(130)
        }
    }

    /// Puts SIGINT's default disposition back.
    static func disarm() {
        signal(SIGINT, SIG_DFL)
    }
}
