import Foundation
import RPC

/// An in-process stand-in for a transport's call: request messages queued up front, response
/// messages collected, and every read and write recorded in order.
///
/// An actor, so handlers may read and write from any task.
actor FakeServerCallIO: ServerCallIO {
    /// One interaction of the handler with the call.
    enum Event: Equatable, Sendable {
        case read(Data?)
        case write(Data)
    }

    private var pending: [Data]
    private(set) var responses: [Data] = []
    private(set) var events: [Event] = []

    /// A call whose client sends `requests` and then half-closes.
    init(requests: [Data]) { pending = requests }

    /// A call whose client sends the JSON texts in `requests`.
    init(json requests: [String]) { pending = requests.map { Data($0.utf8) } }

    func nextMessage() async throws -> Data? {
        let message = pending.isEmpty ? nil : pending.removeFirst()
        events.append(.read(message))
        return message
    }

    func write(_ message: Data) async throws {
        responses.append(message)
        events.append(.write(message))
    }

    /// The responses decoded as `Message`.
    func decodedResponses<Message: Decodable>(as type: Message.Type) throws -> [Message] {
        try responses.map { try JSONCodec.shared.decode(type, from: $0) }
    }
}
