public import RPC

/// `shop.meta.v1.MetaService`: what a process serves, for `shopctl describe`.
public enum MetaContract {
    /// The service name.
    public static let service = "shop.meta.v1.MetaService"
    /// `Describe`: every service and method this process serves.
    public static let describe = MethodDescriptor<Empty, DescribeResponse>(
        service: service, method: "Describe", kind: .unary, idempotent: true)
}

/// The services a process serves.
public struct DescribeResponse: RPCMessage, Equatable {
    /// Services, in registration order.
    public var services: [ServiceDescription]

    /// Creates a description.
    public init(services: [ServiceDescription]) { self.services = services }

    public static let fields = [FieldDescriptor("services", "[ServiceDescription]")]
}

/// One service and its methods.
public struct ServiceDescription: RPCMessage, Equatable {
    /// Fully qualified name.
    public var name: String
    /// Its methods.
    public var methods: [MethodDescription]

    /// Creates a description.
    public init(name: String, methods: [MethodDescription]) {
        self.name = name
        self.methods = methods
    }

    /// The JSON fields, for `Describe`.
    public static let fields = [FieldDescriptor("name", "String"), FieldDescriptor("methods", "[MethodDescription]")]
}

/// One method: name, streaming kind, auth level, idempotency and message fields.
public struct MethodDescription: RPCMessage, Equatable {
    /// Method name.
    public var name: String
    /// `UNARY`, `SERVER_STREAMING`, `CLIENT_STREAMING` or `BIDI_STREAMING`.
    public var kind: MethodKind
    /// `NONE`, `USER`, `OPTIONAL_USER`, `ADMIN` or `INTERNAL`.
    public var auth: AuthLevel
    /// Whether clients may retry it.
    public var idempotent: Bool
    /// Request fields.
    public var requestFields: [FieldDescriptor]
    /// Response fields.
    public var responseFields: [FieldDescriptor]

    /// Describes a registered method.
    public init(_ info: MethodInfo) {
        name = info.method
        kind = info.kind
        auth = info.auth
        idempotent = info.idempotent
        requestFields = info.requestFields
        responseFields = info.responseFields
    }

    /// The JSON fields, for `Describe`.
    public static let fields = [
        FieldDescriptor("name", "String"),
        FieldDescriptor("kind", "String"),
        FieldDescriptor("auth", "String"),
        FieldDescriptor("idempotent", "Bool"),
        FieldDescriptor("requestFields", "[FieldDescriptor]"),
        FieldDescriptor("responseFields", "[FieldDescriptor]"),
    ]
}

extension DescribeResponse {
    /// Groups registered methods by service, keeping their order.
    public init(methods: [MethodInfo]) {
        var services: [ServiceDescription] = []
        for info in methods {
            if let index = services.firstIndex(where: { $0.name == info.service }) {
                services[index].methods.append(MethodDescription(info))
            } else {
                services.append(ServiceDescription(name: info.service, methods: [MethodDescription(info)]))
            }
        }
        self.services = services
    }
}
