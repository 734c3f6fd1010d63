import CloudNotesStore
import Crypto
import Foundation

// MARK: - The rules of format 1

/// Content addresses and merges as protocol/sync.md defines them for format 1.
///
/// Every function here depends on its arguments only: two devices that meet the same revisions make
/// the same merge, with the same id, whichever of them merges and in whichever order it heard of them.
public struct SyncRules: RevisionRules {
    public init() {}

    public func revisionID(memo: String, parents: [String], content: RevisionContent) -> String {
        // Hashed in two parts, so that the text (up to 16 MiB) is not copied into the fields first.
        var hasher = SHA256()
        hasher.update(utf8Of: "cloudnotes-revision-1\n\(memo)\n\(parents.sorted().joined(separator: ","))\n"
            + "\(content.deleted ? "d" : "l")\n\(content.createdAt)\n\(content.modifiedAt)\n")
        if let text = content.text { hasher.update(utf8Of: text) }
        return String(Self.hex(hasher.finalize()).prefix(32))
    }

    public func merge(memo: String, _ a: Revision, _ b: Revision, base: RevisionContent?) -> MergeResult {
        let (left, right) = a.id < b.id ? (a, b) : (b, a)
        let createdAt = min(left.content.createdAt, right.content.createdAt)
        let modifiedAt = max(left.content.modifiedAt, right.content.modifiedAt)
        func result(_ text: String?) -> MergeResult {
            MergeResult(content: RevisionContent(text: text, createdAt: createdAt, modifiedAt: modifiedAt))
        }
        switch (left.content.text, right.content.text) {
        case (nil, nil):
            return result(nil)
        case (nil, let text?), (let text?, nil):
            // A delete never beats an edit it did not see. Without a common ancestor the base is an
            // empty live text (protocol/sync.md).
            let baseText: String? = base.map(\.text) ?? ""
            let edited = baseText != text
            return result(edited ? text : nil)
        case (let leftText?, let rightText?):
            switch TextMerge.merge(base: base?.text ?? "", ours: leftText, theirs: rightText) {
            case .merged(let text):
                return result(text)
            case .conflict:
                let (winner, loser) = Self.laterFirst(left, right)
                var merged = result(winner.content.text)
                merged.conflictCopy = conflictCopy(of: memo, losing: loser)
                return merged
            }
        }
    }

    /// The copy that keeps a losing side's text: a new memo whose id and content every device derives alike.
    func conflictCopy(of memo: String, losing: Revision) -> ConflictCopy {
        let dated = losing.content.modifiedAt
        return ConflictCopy(memo: conflictCopyID(memo: memo, losingText: losing.content.text ?? ""), content: RevisionContent(
            text: Self.conflictCopyPrefix + (losing.content.text ?? ""), createdAt: dated, modifiedAt: dated))
    }

    /// Derived from the losing text, not from the revision that carried it: the same text can lose
    /// on several paths (directly, or inside a merge that carried it), and must make one copy.
    public func conflictCopyID(memo: String, losingText: String) -> String {
        let hex = Array(Self.sha256("cloudnotes-conflict-1\n\(memo)\n\(losingText)").prefix(32))
        return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(hex[$0]) }.joined(separator: "-")
    }

    /// What a conflict copy's text starts with, so that the list shows it for what it is.
    public static let conflictCopyPrefix = "Conflict copy: "

    /// The revision with the later change first; the greater id first when they were made at the same moment.
    static func laterFirst(_ a: Revision, _ b: Revision) -> (Revision, Revision) {
        (a.content.modifiedAt, a.id) > (b.content.modifiedAt, b.id) ? (a, b) : (b, a)
    }

    // MARK: Hashing

    /// The SHA-256 of the UTF-8 of `text`, in lowercase hex.
    static func sha256(_ text: String) -> String {
        var hasher = SHA256()
        hasher.update(utf8Of: text)
        return hex(hasher.finalize())
    }

    /// The SHA-256 of `bytes`, in lowercase hex.
    public static func sha256<Bytes: DataProtocol>(_ bytes: Bytes) -> String {
        hex(SHA256.hash(data: bytes))
    }

    /// `digest` in lowercase hex, written into one string.
    ///
    /// Every revision read or made is hashed: a first sync of 100,000 memos spent a tenth of its time
    /// making a string per byte of the digests, more than in SHA-256 itself.
    static func hex(_ digest: SHA256.Digest) -> String {
        let digits = Array("0123456789abcdef".utf8)
        return String(unsafeUninitializedCapacity: SHA256.byteCount * 2) { buffer in
            for (index, byte) in digest.enumerated() {
                buffer[2 * index] = digits[Int(byte >> 4)]
                buffer[2 * index + 1] = digits[Int(byte & 0x0f)]
            }
            return SHA256.byteCount * 2
        }
    }
}

extension SHA256 {
    /// Hashes the UTF-8 of `text` in place, without copying it into an array.
    mutating func update(utf8Of text: String) {
        var text = text
        text.withUTF8 { update(bufferPointer: UnsafeRawBufferPointer($0)) }
    }
}
