import Foundation
import RPC

/// The one primitive every shopctl call goes through: open a call on `path`, send `requests`
/// and half-close, hand each response message to `onMessage` as it arrives, and throw the
/// call's error status. Unary, streaming and bidirectional calls are all this shape.
///
/// The gateway's implementation is ``GatewayTransport``; tests put fakes behind it.
protocol RawTransport: Sendable {
    /// Runs one call and returns when its status is OK.
    func call(
        path: String, requests: [Data], options: CallOptions, onMessage: (Data) async throws -> Void
    ) async throws
}

/// ``RawTransport`` over an ``RPCClient`` connected to the gateway: raw JSON bytes in and out,
/// so `--json` prints the messages exactly as the server sent them.
///
/// A call the gateway never answered fails as the gateway's own failure when no connection
/// could be made (``GatewayFailure``), and as a plain, retryable `UNAVAILABLE` when the
/// connection was lost before the answer — never as the `UPSTREAM_UNAVAILABLE` the gateway
/// sends for a service behind it that is down.
struct GatewayTransport: RawTransport {
    /// The client of the gateway.
    let client: RPCClient
    /// The gateway's address, for the failures it is named in.
    let gateway: SocketAddressText

    /// Sends the requests while reading the responses, so a bidirectional method that answers
    /// as it reads works too.
    func call(
        path: String, requests: [Data], options: CallOptions, onMessage: (Data) async throws -> Void
    ) async throws {
        var answered = false
        do {
            try await client.withCall(path: path, options: options) { call in
                defer { answered = call.serverAnswered }
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for request in requests { try await call.send(request) }
                        call.finishSending()
                    }
                    while let message = try await call.nextMessage() {
                        try await onMessage(message)
                    }
                    try await group.waitForAll()
                }
            }
        } catch let error as RPCError where !answered {
            throw GatewayFailure.classify(error, gateway: gateway)
        }
    }
}
