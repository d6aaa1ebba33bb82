import Foundation
import RPC

/// Connect's streaming calls, JSON codec (connectrpc.com/docs/protocol, "Streaming-Request"
/// and "Streaming-Response"): `POST` with `content-type: application/connect+json` and the
/// request messages as envelopes — one for a server stream (WatchBasket), any number for a
/// client stream (ImportProducts). The answer is always 200 `application/connect+json`: each
/// response message in an envelope as it comes, then the end-of-stream envelope (flag 0x02)
/// with `{}` or the error (``ConnectError/endOfStream(_:)``).
///
/// The request body has fully arrived when this runs (the transport reads it whole), so a
/// client stream is half-duplex and a bidirectional one too: enough for every method we have,
/// over HTTP/1.1 and HTTP/2 alike.
struct ConnectStreaming {
    let edge: RPCEdge

    static let contentType = "application/connect+json"

    func serve(_ request: WebRequest, headers: RPCEdge.CallHeaders, route: RegisteredMethod?, response: any WebResponse) {
        let requestID = headers.requestID
        let answerHeaders: WebHeaders = ["content-type": Self.contentType, MetadataKey.requestID: requestID.description]
        do throws(RPCError) {
            try ConnectUnary.checkProtocolVersion(headers.connectProtocolVersion)
            if let encoding = headers.connectContentEncoding, encoding.lowercased() != "identity" {
                throw RPCError.unsupportedEncoding(encoding, header: "connect-content-encoding")
            }
            guard let route else { throw RPCError.unknownMethod(request.path) }
            guard route.info.kind != .unary else {
                return RPCEdge.refuseContentType(
                    "\(route.info.path) is a unary method: call it with application/json.", response: response)
            }
            let timeout = try ConnectUnary.timeout(headers.connectTimeout)
            let messages = try ConnectEnvelope.messages(in: request.body, for: route.info.kind)
            let deadline = edge.deadline(for: route, timeout: timeout, request: request)
            let context = edge.context(for: route, over: .connect, request: request, headers: headers, deadline: deadline, response: response)
            RPCEdge.runStream(
                route, context: context, requests: messages, response: response, headers: answerHeaders,
                frame: { ConnectEnvelope.frame($0) }, end: Self.endOfStream)
        } catch {
            // Streams report every error in the end-of-stream message, with HTTP 200.
            response.noteCall(path: route?.info.path ?? request.path, status: error, requestID: requestID)
            response.send(status: 200, headers: answerHeaders, body: Self.endOfStream(error))
        }
    }

    /// The end-of-stream envelope for a call that ended with `status` (nil: OK).
    static func endOfStream(_ status: RPCError?) -> Data {
        ConnectEnvelope.frame(ConnectError.endOfStream(status), flags: ConnectEnvelope.endOfStreamFlag)
    }
}
