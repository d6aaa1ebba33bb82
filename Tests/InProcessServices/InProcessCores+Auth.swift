#if DEBUG  // See InProcessStack.swift.
@testable import auth_svc
import ServiceKit

extension InProcessCores {
    /// auth-svc as the live harness starts it: cheap scrypt (`--scrypt-log-n 10`), mail into
    /// `<data-dir>/mail`.
    static func auth(dataDirectory: String) async throws -> any ServiceCore {
        var configuration = AuthConfiguration(dataDirectory: dataDirectory)
        configuration.port = 0
        configuration.issuer = issuer
        configuration.audience = audience
        configuration.scryptLogN = 10
        return try await AuthServer.make(configuration: configuration, logger: logger)
    }
}
#endif
