import CloudNotesStore
import Foundation
import Testing

@testable import CloudNotesSync

/// The rules of protocol/sync.md, with the test vectors it gives, so that another implementation
/// computes the same ids.
@Suite("Sync rules")
struct SyncRulesTests {
    let rules = SyncRules()
    let memo = "6f1c2a8e-3b7d-4f0a-9c55-2d8e1f4b7a90"

    func revision(_ text: String?, parents: [String] = [], modifiedAt: Int64 = 1_700_000_000_000) -> Revision {
        let content = RevisionContent(text: text, createdAt: 1_700_000_000_000, modifiedAt: modifiedAt)
        return Revision(id: rules.revisionID(memo: memo, parents: parents, content: content), memo: memo,
                        parents: parents, content: content)
    }

    @Test("revision ids and conflict-copy ids match the specification's test vectors")
    func testVectors() {
        let root = revision("hello\n")
        #expect(root.id == "a8eaf2bfa8dccb6bde7d9126b11d3c3f")
        #expect(revision(nil, parents: [root.id], modifiedAt: 1_700_000_100_000).id == "9562788d56795f3f17f6d23c1319f0ae")
        #expect(rules.conflictCopy(of: memo, losing: root).memo == "2a4aaef7-a6df-7ac0-964a-73f02437965e")
    }

    @Test("segment hashes are SHA-256 in lowercase hex, all 64 digits (FIPS 180-2's vectors)")
    func segmentHashes() {
        #expect(SyncRules.sha256(Data("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SyncRules.sha256(Data()) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test("a merge does not depend on which side is which")
    func symmetric() {
        let base = RevisionContent(text: "a\nb\nc\n", createdAt: 1, modifiedAt: 1)
        let pairs = [
            (revision("A\nb\nc\n"), revision("a\nb\nC\n")),  // clean
            (revision("x\nb\nc\n", modifiedAt: 5), revision("y\nb\nc\n", modifiedAt: 7)),  // conflict
            (revision(nil), revision("a\nb\nc\nd\n")),  // delete against an edit
            (revision(nil), revision("a\nb\nc\n")),  // delete against no edit
        ]
        for (a, b) in pairs {
            #expect(rules.merge(memo: memo, a, b, base: base) == rules.merge(memo: memo, b, a, base: base))
        }
    }

    @Test("a conflict keeps the later text in the memo and the earlier in a copy")
    func conflictCopy() {
        let base = RevisionContent(text: "line\n", createdAt: 1, modifiedAt: 1)
        let earlier = revision("earlier\n", modifiedAt: 5), later = revision("later\n", modifiedAt: 7)
        let result = rules.merge(memo: memo, earlier, later, base: base)
        #expect(result.content.text == "later\n")
        #expect(result.conflictCopy?.content.text == "Conflict copy: earlier\n")
        #expect(result.conflictCopy?.content.modifiedAt == 5)
    }

    @Test("a delete wins only against a side that did not change the text")
    func deleteAgainstEdit() {
        let base = RevisionContent(text: "t\n", createdAt: 1, modifiedAt: 1)
        #expect(rules.merge(memo: memo, revision(nil), revision("t\nmore\n"), base: base).content.text == "t\nmore\n")
        #expect(rules.merge(memo: memo, revision(nil), revision("t\n"), base: base).content.deleted)
    }
}
