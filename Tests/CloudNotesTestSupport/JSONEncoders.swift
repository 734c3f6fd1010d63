import CloudNotesJSON
import CloudNotesProtocol
import Foundation

// MARK: - The two JSON encoders compared

/// What `StreamingJSONEncoder` and Foundation's `JSONEncoder` make of `value`, read back as JSON values.
public func bothEncodings(of value: some Encodable) throws -> (streamed: JSONValue, foundation: JSONValue) {
    let streamed = try StreamingJSONEncoder().encode(value)
    let foundation = try JSONEncoder().encode(value)
    return (try JSONDecoder().decode(JSONValue.self, from: Data(streamed)), try JSONDecoder().decode(JSONValue.self, from: foundation))
}
