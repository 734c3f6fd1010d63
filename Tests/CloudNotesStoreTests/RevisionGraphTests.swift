import Testing

@testable import CloudNotesStore

@Suite("Revision graph")
struct RevisionGraphTests {
    @Test("ancestry, leaves and the merge base, also after a criss-cross merge")
    func crissCross() {
        // r → a, b; m1 and m2 both merge a and b (two devices, two results): x and y then share two
        // nearest common ancestors, a and b.
        var graph = RevisionGraph(parents: [
            "r": [], "a": ["r"], "b": ["r"], "m1": ["a", "b"], "m2": ["a", "b"], "x": ["m1"], "y": ["m2"],
        ])
        let leaves = graph.leaves()
        #expect(leaves == ["x", "y"])
        #expect(graph.ancestry(of: "x") == ["x", "m1", "a", "b", "r"])
        // a and b are both nearest, of equal generations: the greater id first, on every device.
        let crossBases = graph.mergeBases("x", "y"), plainBases = graph.mergeBases("a", "b")
        #expect(crossBases == ["b", "a"])
        #expect(plainBases == ["r"])
    }

    @Test("a revision whose parent is unknown is incomplete, and so are its children")
    func incomplete() {
        var graph = RevisionGraph(parents: ["r": [], "c": ["missing"], "d": ["c"]])
        let complete = ["r", "c", "d"].map { graph.isComplete($0) }
        #expect(complete == [true, false, false])
        let leaves = graph.leaves()
        #expect(leaves == ["r"])
    }
}
