import Foundation
import ServiceTestSupport

/// Asks `grpc.health.v1.Health/Check` the way the kubelet's `grpc:` probe does: a standard
/// gRPC client (Python grpcio) sending the protobuf `HealthCheckRequest` with content type
/// `application/grpc`, reading the protobuf `HealthCheckResponse`.
enum KubeletProbe {
    /// The outcome of one check.
    enum Outcome: Equatable, Sendable {
        /// The `ServingStatus` number answered (1 is `SERVING`, 2 `NOT_SERVING`).
        case status(Int)
        /// The call failed or the answer was not a `HealthCheckResponse`; what was printed.
        case failed(String)
    }

    /// Checks `service` ("" for the whole process) at `host:port`.
    static func check(host: String, port: Int, service: String = "") async throws -> Outcome {
        // HealthCheckRequest: field 1 (string) = service; HealthCheckResponse: field 1 (enum,
        // varint) = status, absent when 0 (UNKNOWN).
        let script = """
            import sys, grpc
            host, port, service = sys.argv[1], sys.argv[2], sys.argv[3].encode()
            request = (b"\\x0a" + bytes([len(service)]) + service) if service else b""
            with grpc.insecure_channel(host + ":" + port) as channel:
                check = channel.unary_unary("/grpc.health.v1.Health/Check",
                    request_serializer=lambda message: message, response_deserializer=lambda message: message)
                try:
                    answer = check(request, timeout=5)
                except grpc.RpcError as error:
                    print("error", error.code().name, error.details()); sys.exit(0)
            if answer == b"":
                print("status 0")
            elif len(answer) == 2 and answer[0] == 0x08:
                print("status", answer[1])
            else:
                print("malformed", answer.hex())
            """
        let result = try await Command.run("python3", ["-c", script, host, String(port), service], timeout: .seconds(30))
        let words = result.output.split(separator: " ")
        if result.status == 0, words.count == 2, words[0] == "status",
            let status = Int(words[1].trimmingCharacters(in: .whitespacesAndNewlines))
        {
            return .status(status)
        }
        return .failed("\(result)")
    }
}
