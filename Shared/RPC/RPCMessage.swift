/// A request or response message: JSON on the wire with lowerCamelCase field names, and a
/// description of its fields for `Describe` and the breaking-change check.
public protocol RPCMessage: Codable, Sendable {
    /// The message's fields, in declaration order.
    static var fields: [FieldDescriptor] { get }
}

/// One field of a message, as `Describe` prints it.
public struct FieldDescriptor: Sendable, Hashable, Codable {
    /// The JSON name.
    public let name: String
    /// The type as API.md writes it: `String`, `Int`, `Bool`, `Double`, `Money`, `[Product]`…
    public let type: String
    /// Whether the field may be absent.
    public let optional: Bool

    /// Describes a field.
    public init(_ name: String, _ type: String, optional: Bool = false) {
        self.name = name
        self.type = type
        self.optional = optional
    }
}

/// The empty message `{}`.
public struct Empty: RPCMessage, Equatable {
    /// Creates the empty message.
    public init() {}
    public static let fields: [FieldDescriptor] = []
}
