import CloudNotesJSON
import CloudNotesProtocol
import Foundation

// MARK: - Params

/// Decodes the `params` of a message into its Codable type, with errors that name the param at fault.
enum ParamsDecoding {
    /// Decodes `params`, the JSON text of a message's params; nil (absent), `null` and `[]` count as `{}`,
    /// so that all-optional params get their defaults (`[]` is how Neovim's JSON encoder writes an empty
    /// Lua table). Foundation's decoding errors become the ones a client reads.
    static func decode<Params: Decodable>(_ type: Params.Type, from params: CheckedParams?) throws(ResponseError) -> Params {
        do {
            guard let json = params?.json, !meansNoParams(json) else {
                return try JSONDecoding.decode(Params.self, from: Data("{}".utf8))
            }
            return try JSONDecoding.decode(Params.self, from: json, knownValidUTF8: true)
        } catch let error as ResponseError {
            throw error  // a type that validates itself says precisely what is wrong
        } catch let error as DecodingError {
            throw ResponseError.invalidParams(from: error)
        } catch {
            throw .invalidParams(param: nil, String(describing: error))
        }
    }

    /// Whether the params' JSON text is `null` or an empty array.
    private static func meansNoParams(_ json: Data) -> Bool {
        if json.count == 4 { return json.elementsEqual("null".utf8) }
        let jsonSpace: Set<UInt8> = [0x20, 0x09, 0x0A, 0x0D]
        return json.first == UInt8(ascii: "[") && json.last == UInt8(ascii: "]") && json.dropFirst().dropLast().allSatisfy(jsonSpace.contains)
    }
}

extension RequestType {
    /// The request whose params are `params`, decoded through the type this is called on (a type taken
    /// from the registry by method name).
    static func decoded(from params: CheckedParams?) throws(ResponseError) -> any RequestType {
        try ParamsDecoding.decode(Self.self, from: params)
    }
}

extension NotificationType {
    static func decoded(from params: CheckedParams?) throws(ResponseError) -> any NotificationType {
        try ParamsDecoding.decode(Self.self, from: params)
    }
}

extension ResponseError {
    /// An invalid-params error that names the param (`text`, `memos[3]`) and says what is wrong with it.
    public static func invalidParams(from error: DecodingError) -> ResponseError {
        func path(_ codingPath: [any CodingKey]) -> String? {
            var parts: [String] = []
            for key in codingPath {
                if let index = key.intValue { parts.append("[\(index)]") } else { parts.append((parts.isEmpty ? "" : ".") + key.stringValue) }
            }
            return parts.isEmpty ? nil : parts.joined()
        }
        switch error {
        case .keyNotFound(let key, let context):
            return .invalidParams(param: path(context.codingPath + [key]), "is missing")
        case .valueNotFound(let type, let context):
            if context.codingPath.isEmpty {
                return .invalidParams(param: nil, "params must be an object")
            }
            return .invalidParams(param: path(context.codingPath), "must not be null (expected \(describe(type)))")
        case .typeMismatch(let type, let context):
            guard let name = path(context.codingPath) else {
                return .invalidParams(param: nil, "params must be an object")
            }
            return .invalidParams(param: name, "must be \(describe(type))")
        case .dataCorrupted(let context):
            guard let name = path(context.codingPath) else {
                // The envelope parsed, but a value inside the params did not: an unpaired UTF-16
                // surrogate escape, or a number beyond what a double holds (1e400).
                let detail = (context.underlyingError as NSError?)?.userInfo[NSDebugDescriptionErrorKey] as? String
                return .invalidParams(param: nil, "a value is not valid JSON text" + (detail.map { " (\($0))" } ?? ""))
            }
            return .invalidParams(param: name, context.debugDescription.hasPrefix("is ") ? context.debugDescription : "has an invalid value: \(context.debugDescription)")
        @unknown default:
            return .invalidParams(param: nil, "\(error)")
        }
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type, is MemoID.Type: "a string"
        case is Int.Type, is Int64.Type: "an integer"
        case is Bool.Type: "a boolean"
        case is Double.Type: "a number"
        default:
            "\(type)".hasPrefix("Array") ? "an array" : (("\(type)".hasPrefix("Dictionary") || "\(type)".contains("Request")) ? "an object" : "a \(type)")
        }
    }
}
