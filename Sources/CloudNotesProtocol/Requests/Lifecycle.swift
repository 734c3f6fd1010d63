// MARK: - initialize

/// The first request of a session: who the client is and how it wants dates shown.
public struct InitializeRequest: RequestType, Hashable {
    public static let method = "initialize"
    public static let summary = "Starts the session; must be the first request."
    public typealias Response = InitializeResult

    /// The client's name and version, for the server's log.
    public struct ClientInfo: Codable, Sendable, Hashable {
        public var name: String
        public var version: String?
        public init(name: String, version: String? = nil) {
            self.name = name
            self.version = version
        }
    }

    public var clientInfo: ClientInfo?
    /// A BCP 47 locale such as `ko-KR` or `en_US`; dates and placeholder titles follow it.
    public var locale: String?
    /// An IANA time zone such as `Asia/Seoul`; dates are shown in it.
    public var timeZone: String?
    /// The client's capabilities; none are defined yet, and unknown ones are ignored.
    public var capabilities: JSONValue?

    public init(clientInfo: ClientInfo? = nil, locale: String? = nil, timeZone: String? = nil, capabilities: JSONValue? = nil) {
        self.clientInfo = clientInfo
        self.locale = locale
        self.timeZone = timeZone
        self.capabilities = capabilities
    }

    public static let schema = Schema.object([
        .optional("clientInfo", .object([.required("name", .string()), .optional("version", .string())])),
        .optional("locale", .string(), "BCP 47 locale, e.g. ko-KR; default en-US."),
        .optional("timeZone", .string(), "IANA time zone, e.g. Asia/Seoul; default UTC."),
        .optional("capabilities", .any, "Reserved; ignored."),
    ])
    public static let example = InitializeRequest(
        clientInfo: ClientInfo(name: "cloudnotes.nvim", version: "0.1.0"), locale: "ko-KR", timeZone: "Asia/Seoul",
        capabilities: [:])
}

/// What the server is and everything it supports.
public struct InitializeResult: ResponseType, Hashable {
    /// The server's name and version.
    public struct ServerInfo: Codable, Sendable, Hashable {
        public var name: String
        public var version: String
        public init(name: String, version: String) {
            self.name = name
            self.version = version
        }
    }

    /// What this server speaks: its methods, notifications, formats and limits.
    public struct Capabilities: Codable, Sendable, Hashable {
        /// Every request method the server answers.
        public var requests: [String]
        /// Every notification the server accepts from the client.
        public var notifications: [String]
        /// Every notification the server may send.
        public var serverNotifications: [String]
        public var shareFormats: [String]
        public var exportFormats: [String]
        public var limits: Limits
    }

    /// The resource limits of this server; beyond each one a request is refused with a clear error.
    public struct Limits: Codable, Sendable, Hashable {
        public var maxMessageBytes: Int
        public var maxMemoBytes: Int
        public var maxNestingDepth: Int
        public var maxListLimit: Int
        public init(maxMessageBytes: Int, maxMemoBytes: Int, maxNestingDepth: Int, maxListLimit: Int) {
            self.maxMessageBytes = maxMessageBytes
            self.maxMemoBytes = maxMemoBytes
            self.maxNestingDepth = maxNestingDepth
            self.maxListLimit = maxListLimit
        }
    }

    public var protocolVersion: String
    public var serverInfo: ServerInfo
    public var capabilities: Capabilities

    public init(protocolVersion: String, serverInfo: ServerInfo, capabilities: Capabilities) {
        self.protocolVersion = protocolVersion
        self.serverInfo = serverInfo
        self.capabilities = capabilities
    }

    public static let schema = Schema.object([
        .required("protocolVersion", .string()),
        .required("serverInfo", .object([.required("name", .string()), .required("version", .string())])),
        .required("capabilities", .object([
            .required("requests", .array(.string()), "Every request method the server answers."),
            .required("notifications", .array(.string()), "Every notification the server accepts."),
            .required("serverNotifications", .array(.string()), "Every notification the server sends."),
            .required("shareFormats", .array(.string())),
            .required("exportFormats", .array(.string())),
            .required("limits", .object([
                .required("maxMessageBytes", .integer(minimum: 1)),
                .required("maxMemoBytes", .integer(minimum: 1)),
                .required("maxNestingDepth", .integer(minimum: 1)),
                .required("maxListLimit", .integer(minimum: 1)),
            ])),
        ])),
    ])
    public static let example = InitializeResult(
        protocolVersion: ProtocolRegistry.protocolVersion,
        serverInfo: ServerInfo(name: "cloudnotes", version: "0.1.0"),
        capabilities: ProtocolRegistry.capabilities(
            limits: Limits(maxMessageBytes: 33_554_432, maxMemoBytes: 16_777_216, maxNestingDepth: 64, maxListLimit: 1000)))
}

// MARK: - shutdown

/// Asks the server to stop accepting requests; the `exit` notification then ends the process.
public struct ShutdownRequest: RequestType, ParameterlessMessage, Hashable {
    public static let method = "shutdown"
    public static let summary = "Finishes pending work; afterwards only `exit` is accepted."
    public typealias Response = VoidResponse
    public init() {}
}

// MARK: - Lifecycle notifications

/// Sent by the client after the `initialize` response; the server then selects the newest memo.
public struct InitializedNotification: NotificationType, ParameterlessMessage, Hashable {
    public static let method = "initialized"
    public static let summary = "The client is ready; the server sends the initial selection and detail."
    public init() {}
}

/// Ends the process: exit code 0 after `shutdown`, 1 without.
public struct ExitNotification: NotificationType, ParameterlessMessage, Hashable {
    public static let method = "exit"
    public static let summary = "Ends the process: exit code 0 after `shutdown`, 1 otherwise."
    public init() {}
}

/// Asks the server to cancel a request it has not answered yet; that request is answered with -32800.
public struct CancelRequestNotification: NotificationType, Hashable {
    public static let method = "$/cancelRequest"
    public static let summary = "Cancels a pending request, which is then answered with -32800."
    public var id: RequestID
    public init(id: RequestID) { self.id = id }
    public static let schema = Schema.object([.required("id", .progressToken)])
    public static let example = CancelRequestNotification(id: .number(7))
}
