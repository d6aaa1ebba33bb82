import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import RPC
@testable import StorefrontKit
import Testing

/// A Connect call's response, event by event, without a server.
@Suite("StorefrontKit Connect response state")
struct ConnectResponseStateTests {
    /// A response head with `status` and `headers`.
    static func head(_ status: Int, _ headers: [String: String] = [:]) -> HTTPURLResponse {
        HTTPURLResponse(url: URL(string: "http://gateway.test/x")!, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)!
    }

    /// Everything readable from `state`: the messages, then the end.
    static func drain(_ state: inout ConnectResponseState) -> (messages: [String], end: Result<Void, RPCError>?) {
        var messages: [String] = []
        while let next = state.takeMessage() {
            switch next {
            case .success(let message?): messages.append(String(decoding: message, as: UTF8.self))
            case .success(nil): return (messages, .success(()))
            case .failure(let error): return (messages, .failure(error))
            }
        }
        return (messages, nil)
    }

    @Test("A unary body arriving in pieces is one message, then the end")
    func unaryInPieces() {
        var state = ConnectResponseState(streaming: false, maxMessageSize: 1024)
        _ = state.receive(head: Self.head(200, ["Content-Type": "application/json"]))
        #expect(state.headers?["content-type"] == "application/json")
        _ = state.receive(body: Data(#"{"us"#.utf8))
        _ = state.receive(body: Data(#"er":1}"#.utf8))
        #expect(state.takeMessage() == nil)  // not complete yet
        _ = state.complete(error: nil, transportClosed: false)
        let (messages, end) = Self.drain(&state)
        #expect(messages == [#"{"user":1}"#])
        #expect(end.map { (try? $0.get()) != nil } == true)
    }

    @Test("A unary error status reads the Connect error body")
    func unaryError() {
        var state = ConnectResponseState(streaming: false, maxMessageSize: 1024)
        _ = state.receive(head: Self.head(401, ["shop-error-reason": "MISSING_TOKEN"]))
        _ = state.receive(body: Data(#"{"code":"unauthenticated","message":"Sign in first."}"#.utf8))
        _ = state.complete(error: nil, transportClosed: false)
        guard case .failure(let error)? = Self.drain(&state).end else { Issue.record("no error"); return }
        #expect(error.code == .unauthenticated)
        #expect(error.reason == "MISSING_TOKEN")
        #expect(error.message == "Sign in first.")
    }

    @Test("Only a 200 head begins an answer: an error answer is a status without response headers, retryable")
    func onlySuccessBeginsAnswer() {
        for (status, streaming, began) in [(200, false, true), (200, true, true), (503, false, false), (503, true, false), (302, false, false)] {
            var state = ConnectResponseState(streaming: streaming, maxMessageSize: 1024)
            #expect(!state.answerBegan)
            _ = state.receive(head: Self.head(status))
            #expect(state.answerBegan == began, "HTTP \(status), streaming: \(streaming)")
        }
    }

    @Test("A redirect ends the call UNKNOWN, naming the status and where it pointed, whatever its body")
    func redirectIsAnError() {
        for streaming in [false, true] {
            var state = ConnectResponseState(streaming: streaming, maxMessageSize: 1024)
            _ = state.receive(head: Self.head(301, ["Location": "https://elsewhere.test/x"]))
            _ = state.receive(body: Data(#"{"code":"unavailable"}"#.utf8))
            _ = state.complete(error: nil, transportClosed: false)
            guard case .failure(let error)? = Self.drain(&state).end else { Issue.record("no error"); return }
            #expect(error.code == .unknown)
            #expect(error.message.contains("redirected") && error.message.contains("301 to https://elsewhere.test/x"), "\(error)")
        }
    }

    @Test("A unary body over the limit fails the call")
    func unaryTooLarge() {
        var state = ConnectResponseState(streaming: false, maxMessageSize: 4)
        _ = state.receive(head: Self.head(200))
        let (_, failed) = state.receive(body: Data("12345".utf8))
        #expect(failed)
        guard case .failure(let error)? = Self.drain(&state).end else { Issue.record("no error"); return }
        #expect(error.code == .resourceExhausted)
    }

    @Test("A stream delivers each message as it arrives, then the end-of-stream's error")
    func streamMessagesThenError() {
        var state = ConnectResponseState(streaming: true, maxMessageSize: 1024)
        _ = state.receive(head: Self.head(200))
        _ = state.receive(body: Data(MessageFraming.frame(Data(#"{"n":1}"#.utf8))))
        #expect(Self.drain(&state).messages == [#"{"n":1}"#])
        let end = #"{"error":{"code":"unavailable","message":"Gone."}}"#
        _ = state.receive(body: Data(MessageFraming.frame(Data(#"{"n":2}"#.utf8)) + MessageFraming.frame(Data(end.utf8), flags: 2)))
        _ = state.complete(error: nil, transportClosed: false)  // after the end-of-stream: changes nothing
        let (messages, ended) = Self.drain(&state)
        #expect(messages == [#"{"n":2}"#])
        guard case .failure(let error)? = ended else { Issue.record("no error"); return }
        #expect(error.code == .unavailable)
        #expect(error.message == "Gone.")
    }

    @Test("A stream's unread messages are bounded: a reader that keeps up never hits the bound; one that stops loses the stream, not memory")
    func streamBacklogBounded() {
        // Each message is 10 bytes; 30 may stay unread.
        func message(_ n: Int) -> Data { Data(MessageFraming.frame(Data(#"{"n":\#(1000 + n)}"#.utf8))) }
        var reading = ConnectResponseState(streaming: true, maxMessageSize: 1024, maxUnreadBytes: 30)
        _ = reading.receive(head: Self.head(200))
        for n in 0..<100 {
            let (_, failed) = reading.receive(body: message(n))
            #expect(!failed)
            #expect(Self.drain(&reading).messages == [#"{"n":\#(1000 + n)}"#])
        }

        var stalled = ConnectResponseState(streaming: true, maxMessageSize: 1024, maxUnreadBytes: 30)
        _ = stalled.receive(head: Self.head(200))
        for n in 0..<3 { #expect(!stalled.receive(body: message(n)).failed) }  // 30 bytes: at the bound
        #expect(stalled.receive(body: message(3)).failed)  // past it: the task is cancelled
        let (messages, end) = Self.drain(&stalled)
        #expect(messages.isEmpty)  // the backlog was let go
        guard case .failure(let error)? = end else { Issue.record("no error"); return }
        #expect(error.code == .resourceExhausted)
        #expect(!stalled.receive(body: message(4)).failed)  // ended: later bytes are ignored
        #expect(Self.drain(&stalled).messages.isEmpty)

        // One message is kept however large: the bound is on a backlog, not on a message.
        var large = ConnectResponseState(streaming: true, maxMessageSize: 1024, maxUnreadBytes: 4)
        _ = large.receive(head: Self.head(200))
        #expect(!large.receive(body: message(0)).failed)
        #expect(Self.drain(&large).messages.count == 1)
    }

    @Test("A stream that ends without its end-of-stream message fails")
    func streamWithoutEnd() {
        var state = ConnectResponseState(streaming: true, maxMessageSize: 1024)
        _ = state.receive(head: Self.head(200))
        _ = state.complete(error: nil, transportClosed: false)
        guard case .failure(let error)? = Self.drain(&state).end else { Issue.record("no error"); return }
        #expect(error.code == .internal)
    }

    @Test("A lost connection is UNAVAILABLE; a cancelled task CANCELLED; a closed client UNAVAILABLE", arguments: [
        (URLError.Code.networkConnectionLost, false, RPCCode.unavailable), (.cannotConnectToHost, false, .unavailable),
        (.cancelled, false, .cancelled), (.cancelled, true, .unavailable),
    ])
    func transferFailures(code: URLError.Code, closed: Bool, expected: RPCCode) {
        var state = ConnectResponseState(streaming: false, maxMessageSize: 1024)
        _ = state.complete(error: URLError(code), transportClosed: closed)
        guard case .failure(let error)? = Self.drain(&state).end else { Issue.record("no error"); return }
        #expect(error.code == expected)
    }

    @Test("connect-timeout-ms rounds up to whole milliseconds, at least 1")
    func timeoutHeader() {
        #expect(ConnectWire.timeoutHeaderValue(.milliseconds(1500)) == "1500")
        #expect(ConnectWire.timeoutHeaderValue(.microseconds(1500)) == "2")
        #expect(ConnectWire.timeoutHeaderValue(.zero) == "1")
    }
}
