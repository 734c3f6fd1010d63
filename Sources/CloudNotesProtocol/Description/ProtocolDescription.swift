// MARK: - Machine-readable description

/// The whole protocol as one JSON document: every method with its params and result as JSON Schema
/// (draft 2020-12), the shared types, and the error codes.
///
/// `protocol/protocol.schema.json` is this document; a test fails when the two differ.
public enum ProtocolDescription {
    public static var document: JSONValue {
        var methods: [String: JSONValue] = [:]
        for request in ProtocolRegistry.requests {
            let entry: [String: JSONValue] = [
                "kind": "request", "direction": "client→server", "summary": .string(request.summary),
                "params": request.schema.jsonSchema, "result": request.resultSchema.jsonSchema,
            ]
            methods[request.method] = .object(entry)
        }
        for notification in ProtocolRegistry.clientNotifications {
            methods[notification.method] = [
                "kind": "notification", "direction": "client→server", "summary": .string(notification.summary),
                "params": notification.schema.jsonSchema,
            ]
        }
        for notification in ProtocolRegistry.serverNotifications {
            methods[notification.method] = [
                "kind": "notification", "direction": "server→client", "summary": .string(notification.summary),
                "params": notification.schema.jsonSchema,
            ]
        }
        var definitions: [String: JSONValue] = [:]
        for (name, schema) in ProtocolRegistry.definitions { definitions[name] = schema.jsonSchema }
        let errors = ErrorCode.documented.map { entry -> JSONValue in
            ["code": .number(Double(entry.code.rawValue)), "name": .string(entry.name)]
        }
        return [
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "CloudNotes protocol",
            "protocolVersion": .string(ProtocolRegistry.protocolVersion),
            "methods": .object(methods),
            "$defs": .object(definitions),
            "errors": .array(errors),
        ]
    }
}

extension RequestType {
    /// The schema of this request's result.
    static var resultSchema: Schema { Response.schema }
}

extension Schema {
    /// This shape in JSON Schema (draft 2020-12); objects are closed (`additionalProperties: false`).
    public var jsonSchema: JSONValue {
        switch self {
        case .null: return ["type": "null"]
        case .boolean: return ["type": "boolean"]
        case .integer(let minimum):
            var schema: [String: JSONValue] = ["type": "integer"]
            if let minimum { schema["minimum"] = .number(Double(minimum)) }
            return .object(schema)
        case .number: return ["type": "number"]
        case .string(let format):
            var schema: [String: JSONValue] = ["type": "string"]
            if let format { schema["format"] = .string(format) }
            return .object(schema)
        case .enumeration(let cases): return ["type": "string", "enum": .array(cases.map(JSONValue.string))]
        case .array(let element): return ["type": "array", "items": element.jsonSchema]
        case .object(let fields):
            var properties: [String: JSONValue] = [:]
            for field in fields {
                var property = field.schema.jsonSchema
                if !field.summary.isEmpty, case .object(var members) = property {
                    members["description"] = .string(field.summary)
                    property = .object(members)
                }
                properties[field.name] = property
            }
            return [
                "type": "object", "properties": .object(properties),
                "required": .array(fields.filter(\.isRequired).map { .string($0.name) }),
                "additionalProperties": false,
            ]
        case .reference(let name): return ["$ref": .string("#/$defs/\(name)")]
        case .nullable(let wrapped): return ["anyOf": [wrapped.jsonSchema, ["type": "null"]]]
        case .any: return [:]
        case .oneOf(let options): return ["anyOf": .array(options.map(\.jsonSchema))]
        }
    }
}

import Foundation

extension ProtocolDescription {
    /// The document as pretty-printed JSON with sorted keys, as committed in `protocol/`.
    public static var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(document)) ?? Data(), as: UTF8.self)
    }
}
