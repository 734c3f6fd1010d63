import CloudNotesJSON

// MARK: - The domain types' own JSON

// Each writes what its `Encodable` conformance encodes, member by member, in the same order (the
// streaming encoder's tests compare the two byte for byte): a list page is a hundred rows, and a memo's
// text can be long.

extension MemoID: JSONWritable {
    /// The id as the string it encodes to, without the single-value container (a heap box) that its
    /// `encode(to:)` asks for.
    package func writeJSON(to output: JSONOutput) {
        output.writeString(description)
    }
}

extension Timestamp: JSONWritable {
    package func writeJSON(to output: JSONOutput) {
        output.writeString(iso8601)
    }
}

extension MemoRow: JSONWritable {
    package func writeJSON(to output: JSONOutput) {
        output.writeMember("{\"id\":", id.description)
        output.writeMember(",\"title\":", title)
        output.writeMember(",\"preview\":", preview)
        output.writeMember(",\"modifiedAt\":", modifiedAt.iso8601)
        output.writeMember(",\"displayDate\":", displayDate)
        output.append("}")
    }
}

extension Memo: JSONWritable {
    /// The memo; its body is the end of its text, and escaping turns each byte into the same bytes
    /// wherever it stands, so the body is written as a copy of the text's escaped end: a long memo's
    /// reply is mostly these two, and escaping is the larger share of writing it.
    package func writeJSON(to output: JSONOutput) {
        output.writeMember("{\"id\":", id.description)
        output.append(",\"text\":")
        let escapedBody = output.writeString(text, endingWith: body)
        output.writeMember(",\"title\":", title)
        output.append(",\"body\":")
        if let escapedBody {
            output.writeCopy(of: escapedBody)
        } else {
            output.writeString(body)
        }
        output.writeMember(",\"createdAt\":", createdAt.iso8601)
        output.writeMember(",\"modifiedAt\":", modifiedAt.iso8601)
        output.append(",\"version\":")
        output.writeInteger(version)
        output.writeMember(",\"displayDate\":", displayDate)
        output.append("}")
    }
}
