#if DEBUG  // See InProcessStack.swift.
@testable import auth_svc
import ServiceKit

extension InProcessCores {
    /// auth-svc as the live harness starts it: cheap scrypt (`--scrypt-log-n 10`), mail into
    /// `<data-dir>/mail`, and `options`.
    static func auth(dataDirectory: String, databaseURL: String?, options: InProcessAuthOptions) async throws -> any ServiceCore {
        var configuration = AuthConfiguration(dataDirectory: dataDirectory)
        configuration.databaseURL = databaseURL
        configuration.port = 0
        configuration.issuer = issuer
        configuration.audience = audience
        configuration.scryptLogN = 10
        configuration.signingKeyPath = options.signingKeyPath
        if let linkBaseURL = options.linkBaseURL { configuration.linkBaseURL = linkBaseURL }
        if let google = options.google {
            configuration.providers.append(.google(clientIDs: google.clientIDs, jwks: google.jwks))
        }
        if let apple = options.apple {
            configuration.providers.append(.apple(clientIDs: apple.clientIDs, jwks: apple.jwks))
        }
        return try await AuthServer.make(configuration: configuration, logger: logger)
    }
}
#endif
