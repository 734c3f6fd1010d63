import CloudNotesProtocol
import Foundation
import Testing

// MARK: - The description matches the types

@Suite("Protocol description")
struct SchemaTests {
    /// Every message type's example, encoded, with the schema it must satisfy.
    static let examples: [(name: String, json: JSONValue, schema: Schema)] = {
        var all: [(String, JSONValue, Schema)] = []
        for request in ProtocolRegistry.requests {
            all.append((request.method + " params", request.exampleParamsJSON, request.schema))
            all.append((request.method + " result", request.exampleResultJSON, request.resultSchemaForTests))
        }
        for notification in ProtocolRegistry.clientNotifications + ProtocolRegistry.serverNotifications {
            all.append((notification.method, notification.exampleParamsJSON, notification.schema))
        }
        all.append(("Memo", Memo.exampleJSON, Memo.schema))
        all.append(("MemoRow", MemoRow.exampleJSON, MemoRow.schema))
        all.append(("ImportEntry", ImportEntry.example.json(id: Memo.example.id), ImportEntry.schema))
        return all
    }()

    @Test("every example conforms to its schema, which names every field the type encodes")
    func examplesConform() {
        for example in Self.examples {
            let problems = example.schema.problems(with: example.json, definitions: ProtocolRegistry.definitions)
            #expect(problems.isEmpty, "\(example.name): \(problems)")
        }
    }

    @Test("the validator catches an undescribed field, a missing one and a wrong type")
    func validatorCatchesDrift() {
        let schema = Schema.object([.required("id", .memoID), .optional("limit", .integer(minimum: 1))])
        #expect(!schema.problems(with: ["id": "x", "extra": 1], definitions: [:]).isEmpty)
        #expect(!schema.problems(with: ["limit": 3], definitions: [:]).isEmpty)
        #expect(!schema.problems(with: ["id": "x", "limit": 0], definitions: [:]).isEmpty)
        #expect(!schema.problems(with: ["id": 5], definitions: [:]).isEmpty)
        #expect(schema.problems(with: ["id": "x", "limit": 2], definitions: [:]).isEmpty)
    }

    @Test("protocol/protocol.schema.json is what the Swift types describe")
    func committedDescriptionIsCurrent() throws {
        let url = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("protocol/protocol.schema.json")
        let committed = try String(contentsOf: url, encoding: .utf8)
        #expect(
            committed.trimmingCharacters(in: .whitespacesAndNewlines) == ProtocolDescription.json,
            "protocol/protocol.schema.json is stale: run `swift run cloudnotes protocol-schema > protocol/protocol.schema.json`")
    }

    @Test("the registry names each method once and the error codes are distinct")
    func registryIsConsistent() {
        let methods = ProtocolRegistry.requests.map { $0.method } + ProtocolRegistry.clientNotifications.map { $0.method }
            + ProtocolRegistry.serverNotifications.map { $0.method }
        #expect(Set(methods).count == methods.count)
        let codes = ErrorCode.documented.map(\.code)
        #expect(Set(codes).count == codes.count)
    }

    @Test("each request's example params decode back to the same value")
    func paramsRoundTrip() throws {
        for request in ProtocolRegistry.requests {
            #expect(try request.exampleRoundTrips(), "\(request.method)")
        }
    }
}

// MARK: - Helpers over existential message types

extension RequestType {
    static var exampleParamsJSON: JSONValue { JSONValue(encoding: example) }
    static var exampleResultJSON: JSONValue { JSONValue(encoding: Response.example) }
    static var resultSchemaForTests: Schema { Response.schema }
    static func exampleRoundTrips() throws -> Bool {
        let data = try JSONEncoder().encode(example)
        let again = try JSONEncoder().encode(try JSONDecoder().decode(Self.self, from: data))
        return try JSONDecoder().decode(JSONValue.self, from: data) == JSONDecoder().decode(JSONValue.self, from: again)
    }
}

extension NotificationType {
    static var exampleParamsJSON: JSONValue { JSONValue(encoding: example) }
}
