public import RPC

/// `grpc.health.v1.Health`: the standard health service every process serves, in JSON and —
/// for standard probes — protobuf. https://github.com/grpc/grpc/blob/master/doc/health-checking.md
public enum HealthContract {
    /// The service name.
    public static let service = "grpc.health.v1.Health"
    /// `Check`: the current status of a service ("" for the whole process).
    public static let check = MethodDescriptor<HealthCheckRequest, HealthCheckResponse>(
        service: service, method: "Check", kind: .unary, idempotent: true)
    /// `Watch`: the current status, then every change.
    public static let watch = MethodDescriptor<HealthCheckRequest, HealthCheckResponse>(
        service: service, method: "Watch", kind: .serverStreaming, idempotent: true)
}

/// `{service}`: which service to report on; "" means the whole process.
public struct HealthCheckRequest: RPCMessage, Equatable {
    /// The service name, or "".
    public var service: String

    /// Creates a request.
    public init(service: String = "") { self.service = service }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        service = try container.decodeIfPresent(String.self, forKey: .service) ?? ""
    }

    public static let fields = [FieldDescriptor("service", "String", optional: true)]
}

/// `{status}`: `SERVING`, `NOT_SERVING`, `SERVICE_UNKNOWN` or `UNKNOWN`.
public struct HealthCheckResponse: RPCMessage, Equatable {
    /// The serving status.
    public var status: ServingStatus

    /// Creates a response.
    public init(status: ServingStatus) { self.status = status }

    public static let fields = [FieldDescriptor("status", "String")]
}

/// A health status, with its protobuf enum number.
public enum ServingStatus: String, Codable, Sendable, CaseIterable {
    case unknown = "UNKNOWN"
    case serving = "SERVING"
    case notServing = "NOT_SERVING"
    case serviceUnknown = "SERVICE_UNKNOWN"

    /// The protobuf enum value (`grpc.health.v1.HealthCheckResponse.ServingStatus`).
    public var protobufValue: UInt8 {
        switch self {
        case .unknown: 0
        case .serving: 1
        case .notServing: 2
        case .serviceUnknown: 3
        }
    }
}
