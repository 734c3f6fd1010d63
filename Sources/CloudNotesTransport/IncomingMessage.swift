import CloudNotesProtocol
import Foundation

// MARK: - Incoming messages

/// A line from the client, classified.
public enum IncomingMessage: Sendable {
    /// A request; `line` still holds its params, decoded later by the handler that knows their type.
    case request(id: RequestID, method: String, line: Data)
    case notification(method: String, line: Data)
    /// A line that is not a valid request or notification: answer `error`, with `id` if one could be read.
    case invalid(id: RequestID?, error: ResponseError)
    /// Nothing to answer (a blank line).
    case ignored
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
        case .line(let line):
            return decode(line)
        }
    }

    public func decode(_ line: Data) -> IncomingMessage {
        if line.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }) { return .ignored }
        guard String(validating: line, as: UTF8.self) != nil else {
            return .invalid(id: nil, error: .parseError("the line is not valid UTF-8"))
        }
        switch JSONSyntax.check(line, maxDepth: maxNestingDepth) {
        case .tooDeep:
            return .invalid(id: nil, error: .parseError("JSON nested deeper than \(maxNestingDepth) levels"))
        case .invalid(let problem):
            return .invalid(id: nil, error: .parseError(problem))
        case .array:
            return .invalid(id: nil, error: .invalidRequest("batches (JSON arrays) are not supported; send one message per line"))
        case .scalar:
            return .invalid(id: nil, error: .invalidRequest("a message is a JSON object"))
        case .object:
            break
        }
        let envelope: Envelope
        do {
            envelope = try JSONDecoder().decode(Envelope.self, from: line)
        } catch {
            return .invalid(id: nil, error: .parseError("the line is not JSON"))
        }
        return envelope.classify(line: line)
    }
}

// MARK: - Envelope

/// The members of a JSON-RPC message other than its params.
struct Envelope: Decodable {
    var jsonrpc: JSONValue?
    var id: JSONValue?
    var method: JSONValue?
    var isResponse: Bool
    var hasID: Bool

    enum CodingKeys: String, CodingKey { case jsonrpc, id, method, result, error }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        jsonrpc = try container.decodeIfPresent(JSONValue.self, forKey: .jsonrpc)
        hasID = container.contains(.id)
        id = try container.decodeIfPresent(JSONValue.self, forKey: .id)
        method = try container.decodeIfPresent(JSONValue.self, forKey: .method)
        isResponse = container.contains(.result) || container.contains(.error)
    }

    func classify(line: Data) -> IncomingMessage {
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
        if let requestID { return .request(id: requestID, method: name, line: line) }
        return .notification(method: name, line: line)
    }
}
