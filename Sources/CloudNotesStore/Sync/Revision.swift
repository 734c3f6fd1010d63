import Foundation
import GRDB

// MARK: - Revisions

/// One state of one memo in the sync history: its text (or a tombstone) and the revisions it follows.
///
/// Revisions are immutable and content-addressed (see protocol/sync.md): two devices that make the same
/// revision give it the same id, which is what lets them converge.
public struct Revision: Sendable, Hashable {
    public var id: String
    public var memo: String
    /// Zero, one or two revision ids, sorted.
    public var parents: [String]
    public var content: RevisionContent
    /// The length of the longest history from a root to this revision (a root's is 1), when known: it
    /// orders merge bases (see `RevisionGraph.mergeBases`), also for a device that lacks the history.
    public var generation: Int64?
    /// Whether history before it was pruned: a parent this store lacks is gone, not on its way, and the
    /// revision is complete without it (protocol/sync.md, "Pruning").
    public var cut: Bool

    public init(id: String, memo: String, parents: [String], content: RevisionContent, generation: Int64? = nil,
                cut: Bool = false) {
        self.id = id
        self.memo = memo
        self.parents = parents.sorted()
        self.content = content
        self.generation = generation
        self.cut = cut
    }
}

/// What a revision says a memo is.
public struct RevisionContent: Sendable, Hashable {
    /// Nil in a tombstone.
    public var text: String?
    public var createdAt: Int64
    public var modifiedAt: Int64

    public var deleted: Bool { text == nil }

    public init(text: String?, createdAt: Int64, modifiedAt: Int64) {
        self.text = text
        self.createdAt = createdAt
        self.modifiedAt = modifiedAt
    }
}

/// The rules that make revisions: their content addresses and how two concurrent ones merge.
///
/// The store keeps the history and walks it; the rules (hashing, the text merge) belong to sync.
public protocol RevisionRules: Sendable {
    /// The content address of a revision of `memo` with these parents and content.
    func revisionID(memo: String, parents: [String], content: RevisionContent) -> String
    /// Merges two concurrent revisions' contents, given their common ancestor's (nil when none).
    /// Must depend on nothing but its arguments, and be symmetric in `a` and `b`.
    func merge(memo: String, _ a: Revision, _ b: Revision, base: RevisionContent?) -> MergeResult
    /// The id of the conflict copy a merge of `memo` makes when the text `losingText` loses.
    func conflictCopyID(memo: String, losingText: String) -> String
}

/// The outcome of merging two concurrent revisions.
public struct MergeResult: Sendable, Hashable {
    public var content: RevisionContent
    /// When the texts conflicted: the side that lost, kept as a new memo beside this one.
    public var conflictCopy: ConflictCopy?

    public init(content: RevisionContent, conflictCopy: ConflictCopy? = nil) {
        self.content = content
        self.conflictCopy = conflictCopy
    }
}

/// A new memo holding the text that lost a conflict, so that no edit is lost.
public struct ConflictCopy: Sendable, Hashable {
    public var memo: String
    public var content: RevisionContent

    public init(memo: String, content: RevisionContent) {
        self.memo = memo
        self.content = content
    }
}

// MARK: - Rows

extension Revision {
    /// The columns of table `revision` that make a revision (not where it was published).
    static let columns = "id, memo, parents, deleted, text, createdAt, modifiedAt, generation, cut"

    init(row: Row) {
        let parents: String = row["parents"]
        let deleted: Bool = row["deleted"]
        let text: Data? = deleted ? nil : row["text"]
        self.init(
            id: row["id"], memo: row["memo"],
            parents: parents.isEmpty ? [] : parents.split(separator: ",").map(String.init),
            content: RevisionContent(
                text: text.map { String(storedUTF8: $0) },
                createdAt: row["createdAt"], modifiedAt: row["modifiedAt"]),
            generation: row["generation"], cut: row["cut"])
    }

    /// Inserts the revision unless it is known; returns whether it was new. A new revision made here
    /// (`toPublish`) waits in `outgoingRevision` for a segment; one read from the remote does not, and
    /// notes the device it came from (`from`), for the version its text may become, and the segment
    /// (`segment`), for when every device has taken it in.
    ///
    /// Its generation is the one given, else one more than its parents' when theirs are stored (a root's
    /// is 1), else found later (`MemoStore.completeGenerationsAndCuts`).
    @discardableResult
    func insert(toPublish: Bool, from device: String? = nil, segment: Int64? = nil, _ db: Database) throws -> Bool {
        let generation = try generation ?? (parents.isEmpty ? 1 : Int64.fetchOne(db.cachedStatement(sql: """
            SELECT CASE WHEN count(generation) = ? THEN max(generation) + 1 END FROM revision WHERE id IN (?, ?)
            """), arguments: [parents.count, parents.first, parents.last]))
        try db.cachedStatement(sql: """
            INSERT OR IGNORE INTO revision (id, memo, parents, deleted, text, createdAt, modifiedAt, device, generation, cut, segment)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """).execute(arguments: [
                id, memo, parents.joined(separator: ","), content.deleted, content.text.map { Data($0.utf8) },
                content.createdAt, content.modifiedAt, device, generation, cut, segment,
            ])
        guard db.changesCount > 0 else { return false }
        if toPublish {
            try db.cachedStatement(sql: "INSERT INTO outgoingRevision (revision) VALUES (?)")
                .execute(arguments: [db.lastInsertedRowID])
        }
        return true
    }

    /// Who wrote the text of revision `id` (stored here): the device it came from, or a merge (also
    /// the conflict copy a merge made here).
    static func author(of id: String, parents: [String], _ db: Database) throws -> Author {
        let device = try String.fetchOne(db.cachedStatement(sql: "SELECT device FROM revision WHERE id = ?"), arguments: [id])
        guard parents.count < 2, let device else { return Author(kind: .merge, detail: "") }
        return Author(kind: .device, detail: device)
    }

    static func fetch(id: String, _ db: Database) throws -> Revision? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT \(columns) FROM revision WHERE id = ?"), arguments: [id])
            .map(Revision.init(row:))
    }
}
