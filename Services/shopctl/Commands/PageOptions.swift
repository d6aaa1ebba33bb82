import ArgumentParser

/// `--page-size` and `--page-token`: the paging flags of every list command, checked the same
/// way, and the page size carried into the command each page prints for the next one.
struct PageOptions: ParsableArguments {
    /// The page size; the service's default (20) when absent.
    @Option(parsing: .unconditional, help: "Results per page, 1 to 100 (default 20).") var pageSize: Int?
    /// The page to show.
    @Option(help: "The page token a previous page printed.") var pageToken: String?

    /// Refuses a page size outside 1...100 before anything is sent.
    func validate() throws {
        if let pageSize, !(1...100).contains(pageSize) { throw ValidationError("--page-size must be 1 to 100.") }
    }

    /// The command that prints the next page: `command` (with its filters), then this page size.
    func nextPageCommand(_ command: String) -> String {
        guard let pageSize else { return command }
        return "\(command) --page-size \(pageSize)"
    }
}
