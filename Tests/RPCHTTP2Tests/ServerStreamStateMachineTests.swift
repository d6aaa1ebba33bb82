import RPC
@testable import RPCHTTP2
import Testing

/// A server stream's life cycle without a socket: each event of ``ServerStreamStateMachine``
/// and what it tells the connection to do.
@Suite("Server stream state machine")
struct ServerStreamStateMachineTests {
    /// A machine whose request headers are complete: its call admitted.
    private func admitted() -> ServerStreamStateMachine {
        var machine = ServerStreamStateMachine()
        #expect(machine.headerBlockEnded() == true)
        return machine
    }

    /// The headers a response was submitted with, or nil while none was.
    private func held(_ machine: ServerStreamStateMachine) -> HTTP2HeaderBlock? {
        guard case .submitted(let headers) = machine.response else { return nil }
        return headers
    }

    @Test("header fields are stored only until the first HEADERS block ends; a later block (trailers) admits nothing")
    func headers() {
        var machine = ServerStreamStateMachine()
        #expect(machine.state == .receivingHeaders)
        #expect(machine.isReceivingHeaders && !machine.isReceivingBody && !machine.isRequestEnded)
        #expect(machine.headerBlockEnded() == true)
        #expect(machine.state == .receivingBody)
        #expect(!machine.isReceivingHeaders && machine.isReceivingBody && !machine.isRequestEnded)
        #expect(machine.headerBlockEnded() == false)  // trailers
        #expect(machine.state == .receivingBody)
    }

    @Test("the request ends once; its body is no longer taken, nor are trailers admitted")
    func requestEnds() {
        var machine = admitted()
        #expect(machine.requestEnded() == true)
        #expect(machine.state == .requestEnded)
        #expect(machine.isRequestEnded && !machine.isReceivingBody && !machine.isReceivingHeaders)
        #expect(machine.requestEnded() == false)  // END_STREAM on the trailers after the DATA's
        #expect(machine.headerBlockEnded() == false)
        #expect(machine.state == .requestEnded)
    }

    @Test("a request ending before its headers completed ends it all the same")
    func requestEndsDuringHeaders() {
        var machine = ServerStreamStateMachine()
        #expect(machine.requestEnded() == true)
        #expect(machine.state == .requestEnded && !machine.isReceivingHeaders)
        #expect(machine.headerBlockEnded() == false)
    }

    @Test("a handler starts once; a counted one is taken off the open calls when the stream closes, once")
    func countedHandler() {
        var machine = admitted()
        #expect(machine.handler == .notStarted && !machine.handlerStarted)
        machine.handlerStarts(countedOpen: true)
        #expect(machine.handler == .started(countedOpen: true) && machine.handlerStarted)
        #expect(machine.close() == true)
        #expect(machine.handler == .started(countedOpen: false) && machine.handlerStarted)
        #expect(machine.close() == false)  // the connection closing after nghttp2 closed the stream
    }

    @Test("a handler that does not count (a streaming call, a web request), or none at all, is taken off nothing")
    func uncountedHandler() {
        var streaming = admitted()
        streaming.handlerStarts(countedOpen: false)
        #expect(streaming.handlerStarted)
        #expect(streaming.close() == false)
        #expect(streaming.handler == .started(countedOpen: false))
        var failed = admitted()  // failed or refused before its handler started
        #expect(failed.close() == false)
        #expect(failed.handler == .notStarted && !failed.handlerStarted)
    }

    @Test("new output submits the response until it has been, then resumes its body; the stream holds the headers")
    func response() {
        var machine = admitted()
        #expect(machine.pushAction == .submitResponse)
        #expect(!machine.isResponseSubmitted && held(machine) == nil)
        let headers = HTTP2HeaderBlock([(":status", "200")])
        machine.responseSubmitted(holding: headers)
        #expect(machine.isResponseSubmitted && held(machine) === headers)
        #expect(machine.pushAction == .resumeBody)
        #expect(machine.close() == false)
        #expect(machine.pushAction == .none)
        #expect(held(machine) === headers)  // kept alive with the stream: nghttp2 may still hold the frame
    }

    @Test("a closed stream pushes nothing, whether or not its response went out")
    func pushAfterClose() {
        var machine = admitted()
        #expect(machine.close() == false)
        #expect(machine.pushAction == .none)
        #expect(!machine.isResponseSubmitted)
    }

    @Test("an answer complete while the request still arrives tells the client to stop; after it ended, nothing")
    func responseEnds() {
        var machine = admitted()
        #expect(machine.responseEnded() == true)  // RST_STREAM NO_ERROR
        #expect(machine.requestEnded() == true)
        #expect(machine.responseEnded() == false)
    }

    @Test("a server reset gives its latest reason; headers not sent give theirs only when no reason was given")
    func resets() {
        var machine = admitted()
        #expect(machine.resetReason == nil)
        machine.answerHeadersNotSent()
        #expect(machine.resetReason?.code == .internal)
        #expect(machine.resetReason?.message == ServerStreamStateMachine.headersNotSent.message)
        let passed = RPCError(code: .deadlineExceeded, message: "The deadline passed.")
        machine.serverResets(because: passed)
        #expect(machine.resetReason?.code == .deadlineExceeded)
        let untaken = RPCError(code: .cancelled, message: "The client took none of the answer.")
        machine.serverResets(because: untaken)
        #expect(machine.resetReason?.message == untaken.message)
        machine.answerHeadersNotSent()
        #expect(machine.resetReason?.message == untaken.message)  // the server's reason stays
        #expect(machine.close() == false)
        #expect(machine.resetReason?.message == untaken.message)  // for the log line at close
    }

    @Test("closing ends everything, from any state: no request end, admission, push or stop after it")
    func closeFromEveryState() {
        var requestEnded = admitted()
        #expect(requestEnded.requestEnded() == true)
        for var machine in [ServerStreamStateMachine(), admitted(), requestEnded] {
            #expect(machine.close() == false)
            #expect(machine.state == .closed && machine.isClosed)
            #expect(machine.isRequestEnded && !machine.isReceivingBody && !machine.isReceivingHeaders)
            #expect(machine.requestEnded() == false)
            #expect(machine.headerBlockEnded() == false)
            #expect(machine.pushAction == .none)
            #expect(machine.responseEnded() == false)
        }
    }

    @Test("a unary call's whole life: admitted with its request, started and counted, answered, closed")
    func unaryCall() {
        var machine = ServerStreamStateMachine()
        #expect(machine.headerBlockEnded() == true)  // admit
        #expect(machine.requestEnded() == true)  // END_STREAM on the HEADERS (or the DATA)
        #expect(!machine.handlerStarted)  // so the connection starts it
        machine.handlerStarts(countedOpen: true)
        #expect(machine.pushAction == .submitResponse)
        machine.responseSubmitted(holding: HTTP2HeaderBlock([(":status", "200")]))
        #expect(machine.pushAction == .resumeBody)
        #expect(machine.responseEnded() == false)  // the request had ended: no reset
        #expect(machine.close() == true)
        #expect(machine.isClosed && machine.resetReason == nil)
    }
}
