import Foundation

/// What a run of shopctl takes from its process: the environment variables (`XDG_CONFIG_HOME`,
/// `HOME`, `SHOP_*`), standard input and output, and what stops a watch (SIGINT, SIGTERM).
///
/// Commands read them through ``current``, which is the process's own unless the caller set
/// another for the task — so that tests can run commands in-process, through the same parse
/// and run path as the executable, with a scratch config directory, passwords on "standard
/// input", the output captured and a watch stopped on cue:
///
/// ```swift
/// try await ProcessContext.$current.withValue(context) { try await command.run() }
/// ```
struct ProcessContext: Sendable {
    /// The environment variables.
    var environment: [String: String]
    /// Reads standard input to its end.
    var readStandardInput: @Sendable () -> Data
    /// Writes bytes to standard output.
    var writeStandardOutput: @Sendable (Data) -> Void
    /// What ends a watch in place of SIGINT and SIGTERM, each element one interruption; nil
    /// for the signals themselves.
    var interruptions: AsyncStream<Void>?
    /// How many columns the output may take (tables fit into them); nil for no limit.
    var terminalColumns: Int?
    /// How many lines a screen of output may take (`shopctl top`); nil when unknown.
    var terminalRows: Int?
    /// Whether standard output is a terminal (`shopctl top` then redraws in place).
    var outputIsTerminal: Bool

    /// Creates a context.
    init(
        environment: [String: String], readStandardInput: @escaping @Sendable () -> Data,
        writeStandardOutput: @escaping @Sendable (Data) -> Void, interruptions: AsyncStream<Void>? = nil,
        terminalColumns: Int? = nil, terminalRows: Int? = nil, outputIsTerminal: Bool = false
    ) {
        self.environment = environment
        self.readStandardInput = readStandardInput
        self.writeStandardOutput = writeStandardOutput
        self.interruptions = interruptions
        self.terminalColumns = terminalColumns
        self.terminalRows = terminalRows
        self.outputIsTerminal = outputIsTerminal
    }

    /// The process's own: its environment, file descriptors 0 and 1, its signals, and the
    /// size of the terminal on standard output (or `COLUMNS` and `LINES`).
    static let process = ProcessContext(
        environment: ProcessInfo.processInfo.environment,
        readStandardInput: { FileHandle.standardInput.readDataToEndOfFile() },
        writeStandardOutput: { FileHandle.standardOutput.write($0) },
        terminalColumns: TerminalSize.columns(environment: ProcessInfo.processInfo.environment),
        terminalRows: TerminalSize.rows(environment: ProcessInfo.processInfo.environment),
        outputIsTerminal: TerminalSize.isTerminal())

    /// The context of the running command.
    @TaskLocal static var current = ProcessContext.process
}
