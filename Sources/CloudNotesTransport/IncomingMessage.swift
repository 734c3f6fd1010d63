import CloudNotesBytes
import CloudNotesJSON
import CloudNotesProtocol
import Foundation

// MARK: - Incoming messages

/// A message from the client, classified, with its params decoded into their types.
public enum IncomingMessage: Sendable {
    /// A request: its params decoded into the request type of its method, or the error that says why
    /// they could not be (an unknown method, a bad param). `size` is the length of its params' JSON text.
    case request(id: RequestID, method: String, params: Result<any RequestType, ResponseError>, size: Int)
    /// A notification: its params decoded, or nil when the method is unknown or the params are not of
    /// its type (both are ignored, as in LSP).
    case notification(method: String, params: (any NotificationType)?)
    /// A message that is not a valid request or notification: answer `error`, with `id` if one could be read.
    case invalid(id: RequestID?, error: ResponseError)
    /// Nothing to answer (a blank line).
    case ignored
}

/// A message whose envelope passed JSON-RPC's checks, its params left as JSON text: for a server whose
/// methods another library decodes (`cloudnotes mcp`, over the MCP SDK).
public enum CheckedMessage: Sendable {
    /// A request, and the message's JSON text as it came.
    case request(id: RequestID, method: String, params: Data?, message: Data)
    /// A notification, and the message's JSON text as it came.
    case notification(method: String, params: Data?, message: Data)
    /// A message that is not a valid request or notification: answer `error`, with `id` if one could be read.
    case invalid(id: RequestID?, error: ResponseError)
    /// Nothing to answer (a blank line).
    case ignored
}

/// A message as its envelope tells it, its params still JSON text.
enum RawMessage {
    case request(id: RequestID, method: String, params: CheckedParams?)
    case notification(method: String, params: CheckedParams?)
    case invalid(id: RequestID?, error: ResponseError)
    case ignored
}

/// The JSON text of a message's params, cut from a line the message decoder checked: JSON, and UTF-8
/// throughout.
///
/// Only the message decoder makes them, so the params decoder can take strings from these bytes without
/// checking their UTF-8 again (for a long memo's text, a second check costs as much as all the rest
/// of decoding it).
struct CheckedParams: Sendable {
    /// The params' JSON text.
    let json: Data

    /// `json` must be a slice of a line that `MessageDecoder` found to be JSON and UTF-8.
    init(checkedSliceOfLine json: Data) {
        self.json = json
    }
}

/// Turns lines into messages, refusing everything JSON-RPC 2.0 does not allow.
public struct MessageDecoder: Sendable {
    /// The deepest nesting of arrays and objects accepted; CloudNotes messages need a handful.
    public let maxNestingDepth: Int

    public init(maxNestingDepth: Int) {
        self.maxNestingDepth = maxNestingDepth
    }

    public func decode(_ frame: Frame) -> IncomingMessage {
        switch frame {
        case .oversized(let byteCount):
            return .invalid(id: nil, error: .invalidRequest("the message is \(byteCount) bytes, over the limit"))
        case .malformed(let problem):
            return .invalid(id: nil, error: .parseError(problem))
        case .line(let line):
            return decode(line)
        case .body(let body):
            return decode(body, blankIsIgnored: false)
        }
    }

    /// Checks one message's framing, UTF-8, syntax and envelope as `decode` does, without decoding its
    /// params: another library decodes them.
    public func check(_ frame: Frame) -> CheckedMessage {
        let message: Data
        let raw: RawMessage
        switch frame {
        case .line(let line):
            (message, raw) = (line, classify(line))
        case .body(let body):
            (message, raw) = (body, classify(body, blankIsIgnored: false))
        case .oversized, .malformed:
            guard case .invalid(let id, let error) = decode(frame) else { return .ignored }
            return .invalid(id: id, error: error)
        }
        switch raw {
        case .request(let id, let method, let params):
            return .request(id: id, method: method, params: params?.json, message: message)
        case .notification(let method, let params):
            return .notification(method: method, params: params?.json, message: message)
        case .invalid(let id, let error):
            return .invalid(id: id, error: error)
        case .ignored:
            return .ignored
        }
    }

    /// Decodes one message: a line (where a blank one means nothing) or a `Content-Length` body (where
    /// it is an error: the header promised a message).
    public func decode(_ line: Data, blankIsIgnored: Bool = true) -> IncomingMessage {
        switch classify(line, blankIsIgnored: blankIsIgnored) {
        case .request(let id, let method, let params):
            return .request(id: id, method: method, params: Self.request(method, params), size: params?.json.count ?? 0)
        case .notification(let method, let params):
            return .notification(method: method, params: try? Self.notificationTypes[method]?.decoded(from: params))
        case .invalid(let id, let error):
            return .invalid(id: id, error: error)
        case .ignored:
            return .ignored
        }
    }

    /// The request types of the protocol, by method.
    private static let requestTypes = Dictionary(uniqueKeysWithValues: ProtocolRegistry.requests.map { ($0.method, $0) })
    /// The notification types a client may send, by method.
    private static let notificationTypes = Dictionary(uniqueKeysWithValues: ProtocolRegistry.clientNotifications.map { ($0.method, $0) })

    /// The request of `method` with `params`, or why there is none.
    private static func request(_ method: String, _ params: CheckedParams?) -> Result<any RequestType, ResponseError> {
        guard let type = requestTypes[method] else { return .failure(.methodNotFound(method)) }
        return Result { () throws(ResponseError) in try type.decoded(from: params) }
    }

    /// What the envelope of one message says, its params left as JSON text.
    func classify(_ line: Data, blankIsIgnored: Bool = true) -> RawMessage {
        let (isBlank, isUTF8) = line.withUnsafeBytes { bytes in
            // A line has lost its line end already; a body's may be all it holds.
            (bytes.allSatisfy { $0 == 0x20 || $0 == 0x09 || (!blankIsIgnored && ($0 == 0x0D || $0 == 0x0A)) },
             UTF8Validation.isValid(bytes))
        }
        if isBlank {
            return blankIsIgnored ? .ignored : .invalid(id: nil, error: .parseError("the message's body is empty"))
        }
        guard isUTF8 else {
            return .invalid(id: nil, error: .parseError("the line is not valid UTF-8"))
        }
        let members: [JSONSyntax.Member]
        switch JSONSyntax.check(line, maxDepth: maxNestingDepth) {
        case .tooDeep:
            return .invalid(id: nil, error: .parseError("JSON nested deeper than \(maxNestingDepth) levels"))
        case .invalid(let problem):
            return .invalid(id: nil, error: .parseError(problem))
        case .array:
            return .invalid(id: nil, error: .invalidRequest("batches (JSON arrays) are not supported; send one message per line"))
        case .scalar:
            return .invalid(id: nil, error: .invalidRequest("a message is a JSON object"))
        case .object(let found):
            members = found
        }
        guard let envelope = Envelope(members: members, of: line) else {
            return .invalid(id: nil, error: .parseError("the line is not JSON"))
        }
        return envelope.classify()
    }
}

// MARK: - Envelope

/// The members of a JSON-RPC message, read from where the syntax check found them: the params stay JSON
/// text, parsed once more only for them, into the type their method names.
struct Envelope {
    var jsonrpc: JSONValue?
    var id: JSONValue?
    var method: JSONValue?
    var params: CheckedParams?
    var isResponse = false
    var hasID = false

    /// The member names JSON-RPC gives a meaning to; the others are ignored.
    private enum Name: String, CaseIterable {
        case jsonrpc, id, method, params, result, error

        /// Its bit in a set of names seen.
        var bit: UInt8 {
            switch self {
            case .jsonrpc: 1
            case .id: 2
            case .method: 4
            case .params: 8
            case .result: 16
            case .error: 32
            }
        }
    }

    /// Nil when a member's value cannot be read (an unpaired surrogate escape in the method name).
    init?(members: [JSONSyntax.Member], of line: Data) {
        // Names and small values are read from the line's bytes in place: a `Data` slice per member
        // (and its iteration byte by byte) cost more than the rest of classifying a message.
        var paramsRange: Range<Int>?
        let readAll = line.withUnsafeBytes { bytes -> Bool in
            // The first member of a name counts (protocol/README.md, "duplicate member names"), as in Foundation's decoder.
            var seen: UInt8 = 0
            for member in members {
                guard let name = Self.name(UnsafeRawBufferPointer(rebasing: bytes[member.name])) else { continue }
                guard seen & name.bit == 0 else { continue }
                seen |= name.bit
                let value = UnsafeRawBufferPointer(rebasing: bytes[member.value])
                switch name {
                case .jsonrpc: guard let read = Self.read(value) else { return false }; jsonrpc = read
                case .id: guard let read = Self.read(value) else { return false }; id = read; hasID = true
                case .method: guard let read = Self.read(value) else { return false }; method = read
                case .params: paramsRange = member.value
                case .result, .error: isResponse = true
                }
            }
            return true
        }
        guard readAll else { return nil }
        if let paramsRange {
            let base = line.startIndex
            params = CheckedParams(checkedSliceOfLine: line[(base + paramsRange.lowerBound)..<(base + paramsRange.upperBound)])
        }
    }

    /// A member name JSON-RPC gives a meaning to, or nil: its bytes between the quotes when they hold no
    /// escape (every name a client sends in practice), else decoded.
    private static func name(_ quoted: UnsafeRawBufferPointer) -> Name? {
        let inner = UnsafeRawBufferPointer(rebasing: quoted.dropFirst().dropLast())
        if !inner.contains(UInt8(ascii: "\\")) {
            // Longer than every name that counts: not one of them.
            guard inner.count <= 7 else { return nil }
            return Name.allCases.first { inner.elementsEqual($0.rawValue.utf8) }
        }
        return (try? JSONDecoder().decode(String.self, from: Data(quoted))).flatMap(Name.init(rawValue:))
    }

    /// A small value (jsonrpc, id, method): plain strings and integers directly, anything else decoded.
    private static func read(_ value: UnsafeRawBufferPointer) -> JSONValue? {
        if value.first == UInt8(ascii: "\""), !value.contains(UInt8(ascii: "\\")) {
            return .string(String(decoding: UnsafeRawBufferPointer(rebasing: value.dropFirst().dropLast()), as: UTF8.self))
        }
        if value.count <= 15, let integer = Int64(String(decoding: value, as: UTF8.self)) {
            return .number(Double(integer))
        }
        return try? JSONDecoder().decode(JSONValue.self, from: Data(value))
    }

    func classify() -> RawMessage {
        // Read the id first, so that every later error can name the request it answers.
        var requestID: RequestID?
        if hasID {
            switch id {
            case .number(let number) where number.rounded() == number && abs(number) <= 9_007_199_254_740_991:
                requestID = .number(Int64(number))
            case .string(let string):
                requestID = .string(string)
            default:
                return .invalid(id: nil, error: .invalidRequest("'id' must be an integer or a string"))
            }
        }
        guard jsonrpc == .string("2.0") else {
            return .invalid(id: requestID, error: .invalidRequest("'jsonrpc' must be \"2.0\""))
        }
        guard let method else {
            if isResponse {
                return .invalid(id: nil, error: .invalidRequest("the server sends no requests, so it expects no responses"))
            }
            return .invalid(id: requestID, error: .invalidRequest("'method' is missing"))
        }
        guard case .string(let name) = method else {
            return .invalid(id: requestID, error: .invalidRequest("'method' must be a string"))
        }
        if let requestID { return .request(id: requestID, method: name, params: params) }
        return .notification(method: name, params: params)
    }
}
