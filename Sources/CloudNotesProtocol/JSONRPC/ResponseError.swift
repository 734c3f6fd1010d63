// MARK: - Error codes

/// A JSON-RPC error code: an open set, so that new application codes need no new enum case.
public struct ErrorCode: RawRepresentable, Hashable, Sendable, Codable {
    public var rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    // JSON-RPC 2.0
    public static let parseError = ErrorCode(rawValue: -32700)
    public static let invalidRequest = ErrorCode(rawValue: -32600)
    public static let methodNotFound = ErrorCode(rawValue: -32601)
    public static let invalidParams = ErrorCode(rawValue: -32602)
    public static let internalError = ErrorCode(rawValue: -32603)

    // Language Server Protocol
    public static let serverNotInitialized = ErrorCode(rawValue: -32002)
    public static let requestCancelled = ErrorCode(rawValue: -32800)

    // CloudNotes application codes
    public static let memoNotFound = ErrorCode(rawValue: -33001)
    public static let versionConflict = ErrorCode(rawValue: -33002)
    public static let importInvalid = ErrorCode(rawValue: -33003)
    public static let exportFailed = ErrorCode(rawValue: -33004)
    public static let storeUnavailable = ErrorCode(rawValue: -33005)
    public static let syncFailed = ErrorCode(rawValue: -33006)
    public static let versionNotFound = ErrorCode(rawValue: -33007)

    /// Every code the server may send, with the name the specification gives it.
    public static let documented: [(code: ErrorCode, name: String)] = [
        (.parseError, "ParseError"),
        (.invalidRequest, "InvalidRequest"),
        (.methodNotFound, "MethodNotFound"),
        (.invalidParams, "InvalidParams"),
        (.internalError, "InternalError"),
        (.serverNotInitialized, "ServerNotInitialized"),
        (.requestCancelled, "RequestCancelled"),
        (.memoNotFound, "MemoNotFound"),
        (.versionConflict, "VersionConflict"),
        (.importInvalid, "ImportInvalid"),
        (.exportFailed, "ExportFailed"),
        (.storeUnavailable, "StoreUnavailable"),
        (.syncFailed, "SyncFailed"),
        (.versionNotFound, "VersionNotFound"),
    ]
}

// MARK: - Response error

/// The `error` member of a JSON-RPC response: a code, a sentence for people and data for programs.
public struct ResponseError: Error, Hashable, Sendable, Codable {
    public var code: ErrorCode
    public var message: String
    public var data: JSONValue?

    public init(code: ErrorCode, message: String, data: JSONValue? = nil) {
        self.code = code
        self.message = message
        self.data = data
    }

    // MARK: Factories

    public static func parseError(_ detail: String) -> ResponseError {
        ResponseError(code: .parseError, message: "Parse error: \(detail)")
    }

    public static func invalidRequest(_ detail: String) -> ResponseError {
        ResponseError(code: .invalidRequest, message: "Invalid request: \(detail)")
    }

    public static func methodNotFound(_ method: String) -> ResponseError {
        ResponseError(
            code: .methodNotFound, message: "Method not found: \(method)",
            data: ["method": .string(method)])
    }

    /// An invalid parameter; `param` is its path, such as `text` or `memos[3].title`.
    public static func invalidParams(param: String?, _ detail: String) -> ResponseError {
        let message = param.map { "Invalid params: '\($0)' \(detail)" } ?? "Invalid params: \(detail)"
        return ResponseError(
            code: .invalidParams, message: message,
            data: param.map { ["param": .string($0)] })
    }

    public static func internalError(_ detail: String) -> ResponseError {
        ResponseError(code: .internalError, message: "Internal error: \(detail)")
    }

    public static let serverNotInitialized = ResponseError(
        code: .serverNotInitialized, message: "Server not initialized: send 'initialize' first")

    public static let cancelled = ResponseError(code: .requestCancelled, message: "Request cancelled")

    public static func memoNotFound(_ id: MemoID) -> ResponseError {
        ResponseError(
            code: .memoNotFound, message: "No memo with id \(id)",
            data: ["id": .string(id.description)])
    }

    /// Memo `id` keeps no version `number`: never kept, or pruned by the history policy.
    public static func versionNotFound(_ id: MemoID, number: Int64) -> ResponseError {
        ResponseError(
            code: .versionNotFound, message: "Memo \(id) keeps no version \(number); memo/history lists the ones it keeps",
            data: ["id": .string(id.description), "version": .number(Double(number))])
    }

    /// The memo moved on since `baseVersion`; `current` is what the store holds now.
    public static func versionConflict(baseVersion: Int64, current: Memo) -> ResponseError {
        ResponseError(
            code: .versionConflict,
            message: "Version conflict: the memo is at version \(current.version), not \(baseVersion)",
            data: ["baseVersion": .number(Double(baseVersion)), "memo": JSONValue(encoding: current)])
    }

    /// An import source that is not in the expected format; `index` is the 0-based entry at fault.
    public static func importInvalid(_ detail: String, index: Int? = nil, path: String? = nil) -> ResponseError {
        var data: [String: JSONValue] = ["reason": .string(detail)]
        if let index { data["index"] = .number(Double(index)) }
        if let path { data["path"] = .string(path) }
        let location = index.map { " (entry \($0))" } ?? ""
        return ResponseError(code: .importInvalid, message: "Import failed\(location): \(detail)", data: .object(data))
    }

    public static func exportFailed(_ detail: String, path: String) -> ResponseError {
        ResponseError(
            code: .exportFailed, message: "Export failed: \(detail)",
            data: ["reason": .string(detail), "path": .string(path)])
    }

    public static func storeUnavailable(_ detail: String) -> ResponseError {
        ResponseError(
            code: .storeUnavailable, message: "The store refused the change: \(detail)",
            data: ["reason": .string(detail)])
    }

    /// A sync could not finish; `reason` is one of `notConfigured`, `badRemote`, `unreachable`,
    /// `unauthorized`, `corruptRemote`, `remoteLostHistory`. Nothing it did is lost.
    public static func syncFailed(_ detail: String, reason: String) -> ResponseError {
        ResponseError(code: .syncFailed, message: "Sync failed: \(detail)", data: ["reason": .string(reason)])
    }
}
