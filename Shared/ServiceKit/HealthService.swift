internal import Contracts
internal import Foundation
internal import RPC

/// Serves `grpc.health.v1.Health` from a ``HealthMonitor``, in JSON for our clients and in
/// protobuf for standard probes (content type `application/grpc` with a binary body).
struct HealthService {
    let monitor: HealthMonitor

    /// Adds Check and Watch to `router`.
    func register(into router: inout Router) {
        let monitor = self.monitor
        // Never suspends: probes are answered on the loop thread, with no task.
        router.registerImmediate(HealthContract.check.info) { data, context in
            let (request, format) = try Self.decodeRequest(data, context: context)
            guard let status = monitor.status(of: request.service) else {
                throw RPCError(code: .notFound, reason: "SERVICE_UNKNOWN", message: "Unknown service '\(request.service)'.")
            }
            return try format.encode(status)
        }
        router.register(HealthContract.watch.info) { io, context in
            let (request, format) = try await Self.readRequest(io, context: context)
            for await status in monitor.updates(for: request.service) {
                try Task.checkCancellation()
                try await io.write(try format.encode(status))
            }
        }
        // Standard probes send `application/grpc+proto` (or bare `application/grpc`).
        router.acceptProtobuf(for: HealthContract.check.info)
        router.acceptProtobuf(for: HealthContract.watch.info)
    }

    /// Reads the one request message, deciding its format from the content type and body.
    static func readRequest(_ io: any ServerCallIO, context: ServerContext) async throws -> (HealthCheckRequest, Format) {
        try decodeRequest(try await Router.singleRawRequest(from: io), context: context)
    }

    /// Decodes a request message, deciding its format from the content type and body.
    static func decodeRequest(_ data: Data, context: ServerContext) throws -> (HealthCheckRequest, Format) {
        let format = Format(contentType: context.contentType, body: data)
        switch format {
        case .json: return (try JSONCodec.shared.decode(HealthCheckRequest.self, from: data), format)
        case .protobuf: return (HealthCheckRequest(service: try Protobuf.stringField(1, in: data)), format)
        }
    }

    /// The wire format of one health call.
    enum Format {
        case json, protobuf

        /// JSON for `+json`; for bare `application/grpc` (and `+proto`), JSON only when the body
        /// is a JSON object — an empty or binary body is protobuf.
        init(contentType: String, body: Data) {
            if contentType.hasPrefix("application/grpc+json") {
                self = .json
            } else if let first = body.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }), first == UInt8(ascii: "{") {
                self = .json
            } else {
                self = .protobuf
            }
        }

        func encode(_ status: ServingStatus) throws -> Data {
            switch self {
            case .json: return try JSONCodec.shared.encode(HealthCheckResponse(status: status))
            case .protobuf:
                // Field 1, varint; proto3 omits a zero value.
                return status.protobufValue == 0 ? Data() : Data([0x08, status.protobufValue])
            }
        }
    }
}

/// Just enough protobuf decoding for the health request: one string field, others skipped.
enum Protobuf {
    /// The last value of string field `number` in `data` ("" when absent).
    static func stringField(_ number: UInt64, in data: Data) throws(RPCError) -> String {
        let bytes = [UInt8](data)
        var index = 0
        var result = ""
        func malformed() -> RPCError {
            RPCError(code: .invalidArgument, reason: "MALFORMED_MESSAGE", message: "The protobuf message is malformed.")
        }
        func varint() throws(RPCError) -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while index < bytes.count, shift < 64 {
                let byte = bytes[index]
                index += 1
                value |= UInt64(byte & 0x7F) << shift
                if byte & 0x80 == 0 { return value }
                shift += 7
            }
            throw malformed()
        }
        while index < bytes.count {
            let key = try varint()
            switch key & 7 {
            case 0: _ = try varint()
            case 1: index += 8
            case 5: index += 4
            case 2:
                let length = try varint()
                guard length <= UInt64(bytes.count - index) else { throw malformed() }
                if key >> 3 == number {
                    guard let text = String(validating: bytes[index..<(index + Int(length))], as: UTF8.self) else { throw malformed() }
                    result = text
                }
                index += Int(length)
            default: throw malformed()
            }
            if index > bytes.count { throw malformed() }
        }
        return result
    }
}
