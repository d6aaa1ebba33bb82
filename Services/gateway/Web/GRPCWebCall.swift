import Foundation
import RPC

/// gRPC-Web calls, JSON codec (grpc/grpc doc/PROTOCOL-WEB.md): `POST` with
/// `application/grpc-web+json` or `application/grpc-web` (JSON too, as the gRPC path treats
/// `application/grpc`), or their `-text` forms whose bodies both ways are base64
/// (``GRPCWebText``). The body is gRPC length-prefixed messages; the answer is 200 with the
/// request's media type, the response messages, then the status as a trailer frame (flag
/// 0x80) of `name: value\r\n` lines — `grpc-status`, `grpc-message` (percent-encoded),
/// `shop-error-reason`, `shop-error-details-bin` (base64, in text mode too, as Envoy's
/// gRPC-Web filter leaves it) — so a client that cannot read HTTP trailers gets them.
///
/// Every status, even a refusal before any message, travels in the trailer frame of a 200:
/// one place for clients to read it.
struct GRPCWebCall {
    let edge: RPCEdge
    /// The request's media type, without parameters: the answer's.
    let mediaType: String
    /// Whether bodies are base64 (`application/grpc-web-text…`).
    let text: Bool

    func serve(_ request: WebRequest, headers: RPCEdge.CallHeaders, route: RegisteredMethod?, response: any WebResponse) {
        let requestID = headers.requestID
        let answerHeaders: WebHeaders = ["content-type": mediaType, MetadataKey.requestID: requestID.description]
        do throws(RPCError) {
            if let encoding = headers.grpcEncoding, encoding != "identity" { throw .unsupportedEncoding(encoding) }
            guard let route else { throw .unknownMethod(request.path) }
            let timeout = try GRPCTimeout.parseHeader(headers.grpcTimeout)
            let body = text ? try GRPCWebText.decode(request.body) : request.body
            let messages = try ConnectEnvelope.messages(in: body, for: route.info.kind)
            let deadline = edge.deadline(for: route, timeout: timeout, request: request)
            let context = edge.context(for: route, over: text ? .grpcWebText : .grpcWeb, request: request, headers: headers, deadline: deadline, response: response)
            if route.info.kind == .unary {
                // What the router's unary handlers answer to no message (gRPC requires one).
                guard let message = messages.first else { throw Router.noRequestMessage }
                RPCEdge.runUnary(route, context: context, request: message, response: response) { [self] result in
                    RPCEdge.Answer(status: 200, headers: answerHeaders, body: whole(result))
                }
            } else {
                RPCEdge.runStream(
                    route, context: context, requests: messages, response: response, headers: answerHeaders,
                    frame: { [text] message in text ? GRPCWebText.encodeStreamed(message) : ConnectEnvelope.frame(message) },
                    end: { [text] status in text ? GRPCWebText.encode(Self.trailerFrame(status)) : Self.trailerFrame(status) })
            }
        } catch {
            response.noteCall(path: route?.info.path ?? request.path, status: error, requestID: requestID)
            response.send(status: 200, headers: answerHeaders, body: whole(.failure(error)))
        }
    }

    /// The whole body of a unary answer: the message's frame (after success) and the trailer
    /// frame, base64 at once in text mode.
    private func whole(_ result: Result<Data, RPCError>) -> Data {
        var body = Data()
        switch result {
        case .success(let message):
            body = ConnectEnvelope.frame(message)
            body.append(Self.trailerFrame(nil))
        case .failure(let error):
            body = Self.trailerFrame(error)
        }
        return text ? GRPCWebText.encode(body) : body
    }

    /// The trailer frame of a call that ended with `status` (nil: OK): the gRPC path's
    /// trailers (``RPC/RPCError/trailers``, already bounded and percent-encoded) as lines.
    static func trailerFrame(_ status: RPCError?) -> Data {
        var block = ""
        for (name, value) in status?.trailers ?? RPCError.okTrailers { block += "\(name): \(value)\r\n" }
        return ConnectEnvelope.frame(Data(block.utf8), flags: ConnectEnvelope.trailersFlag)
    }
}
