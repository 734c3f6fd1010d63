import CloudNotesProtocol
import CloudNotesTestSupport
import Foundation
import Testing

@testable import CloudNotesTransport

@Suite("Outgoing messages")
struct OutgoingMessageTests {
    @Test("every example message encodes as Foundation's encoder would")
    func messages() throws {
        for request in ProtocolRegistry.requests {
            let pair = try bothEncodings(of: OutgoingResult(id: .number(1), result: AnyEncodable(request.exampleResponse)))
            #expect(pair.streamed == pair.foundation, "\(request.method)")
        }
        for notification in ProtocolRegistry.serverNotifications + ProtocolRegistry.clientNotifications {
            let pair = try bothEncodings(of: OutgoingNotification(method: notification.method, params: AnyEncodable(notification.example)))
            #expect(pair.streamed == pair.foundation, "\(notification.method)")
        }
        let error = try bothEncodings(of: OutgoingError(id: nil, error: .versionConflict(baseVersion: 1, current: .example)))
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
