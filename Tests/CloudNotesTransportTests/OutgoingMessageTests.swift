import CloudNotesJSON
import CloudNotesProtocol
import Foundation
import Testing

@testable import CloudNotesTransport

@Suite("Outgoing messages")
struct OutgoingMessageTests {
    /// What both encoders make of `value`, read back as JSON values.
    func both(_ value: some Encodable) throws -> (streamed: JSONValue, foundation: JSONValue) {
        let streamed = try StreamingJSONEncoder().encode(value)
        let foundation = try JSONEncoder().encode(value)
        return (try JSONDecoder().decode(JSONValue.self, from: Data(streamed)), try JSONDecoder().decode(JSONValue.self, from: foundation))
    }

    @Test("every example message encodes as Foundation's encoder would")
    func messages() throws {
        for request in ProtocolRegistry.requests {
            let pair = try both(OutgoingResult(id: .number(1), result: AnyEncodable(request.exampleResponse)))
            #expect(pair.streamed == pair.foundation, "\(request.method)")
        }
        for notification in ProtocolRegistry.serverNotifications + ProtocolRegistry.clientNotifications {
            let pair = try both(OutgoingNotification(method: notification.method, params: AnyEncodable(notification.example)))
            #expect(pair.streamed == pair.foundation, "\(notification.method)")
        }
        let error = try both(OutgoingError(id: nil, error: .versionConflict(baseVersion: 1, current: .example)))
        #expect(error.streamed == error.foundation)
    }
}

private struct AnyEncodable: Encodable {
    let value: any Encodable
    init(_ value: any Encodable) { self.value = value }
    func encode(to encoder: any Encoder) throws { try value.encode(to: encoder) }
}

extension RequestType {
    static var exampleResponse: any Encodable { Response.example }
}
