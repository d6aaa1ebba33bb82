package import RPCHTTP2
package import RPC

extension HTTP2Server {
    /// Starts listening and returns the loopback address; when that fails, runs `cleanUp`
    /// (releasing what was built around the server: clients, databases, scratch directories)
    /// before rethrowing.
    package func startListening(orCleanUp cleanUp: () async -> Void) async throws -> SocketAddressText {
        do {
            return SocketAddressText(host: "127.0.0.1", port: try start())
        } catch {
            await cleanUp()
            throw error
        }
    }
}
