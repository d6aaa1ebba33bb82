package import Logging

/// Loggers for the in-process servers of contract tests.
package enum ContractLogging {
    /// Warnings and worse only.
    package static let quiet: Logger = {
        var logger = Logger(label: "contract-tests")
        logger.logLevel = .warning
        return logger
    }()
}
