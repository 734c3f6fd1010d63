// MARK: - Message protocols

/// A request a client sends: its params are `Self`, its result is `Response`.
///
/// Every request type names its JSON-RPC method, so that the registry, the dispatcher and
/// the specification all read the method name from one place.
public protocol RequestType: Codable, Sendable, SchemaDescribed {
    associatedtype Response: ResponseType
    static var method: String { get }
    /// One sentence for the specification.
    static var summary: String { get }
}

/// The result of a request.
public protocol ResponseType: Codable, Sendable, SchemaDescribed {}

/// A notification, in either direction: no id, no response.
public protocol NotificationType: Codable, Sendable, SchemaDescribed {
    static var method: String { get }
    static var summary: String { get }
}

/// The result of a request that has nothing to return: encoded as JSON `null`, as LSP's `shutdown`.
public struct VoidResponse: ResponseType, Hashable {
    public init() {}
    public init(from decoder: any Decoder) throws {}
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encodeNil()
    }
    public static let schema = Schema.null
    public static let example = VoidResponse()
}

/// A request or notification whose params are an empty object, which is also its example.
public protocol ParameterlessMessage: SchemaDescribed {
    init()
}

extension ParameterlessMessage {
    public static var schema: Schema { .object([]) }
    public static var example: Self { Self() }
}

/// Params of a message that takes none.
public struct NoParams: Codable, Sendable, Hashable {
    public init() {}
}

/// An LSP progress token: an integer or a string chosen by the client.
public typealias ProgressToken = RequestID
