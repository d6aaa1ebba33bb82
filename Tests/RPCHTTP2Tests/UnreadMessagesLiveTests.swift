import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

extension LiveTests {
    /// What a caller reads of the messages that arrived before its call ended.
    @Suite("Messages received before a call ended")
    struct UnreadMessagesLiveTests {
        @Test("the messages a server sent before failing are read before its status, as in-process")
        func messagesBeforeAFailure() async throws {
            try await withLiveServer { live in
                let call = try live.client.makeCall(path: FixtureContract.writeThenFail.path, options: CallOptions(timeout: .seconds(5)))
                try await call.send(Data("{}".utf8))
                call.finishSending()
                // The status is in before anything is read: the message waits in the call's inbox.
                let http2Call = try #require(call as? HTTP2ClientCall)
                #expect(await eventually(within: .seconds(5), every: .milliseconds(5)) { http2Call.hasEnded })
                #expect(try await call.nextMessage() == Data("written".utf8))
                await expectRPCError(.internal) { _ = try await call.nextMessage() }
            }
        }

        @Test("a cancelled call's readers meet CANCELLED at once, whatever had arrived")
        func cancelDropsUnread() async throws {
            try await withLiveServer { live in
                let call = try live.client.makeCall(path: FixtureContract.rawEcho.path, options: CallOptions(timeout: .seconds(5)))
                try await call.send(Data("a".utf8))
                try await call.send(Data("b".utf8))
                #expect(try await call.nextMessage() == Data("a".utf8))
                try await Task.sleep(for: .milliseconds(100))  // "b" comes back meanwhile, unread
                call.cancel()
                await expectRPCError(.cancelled) { _ = try await call.nextMessage() }
            }
        }
    }
}
