import CloudNotesTestSupport
import Foundation
import Testing

import CloudNotesSync

/// Hand-written merges: what a user editing one memo on two devices should see.
@Suite("Three-way merge of memo texts")
struct TextMergeTests {
    @Test("edits in different paragraphs both apply, line by line in Korean text too", arguments: [
        ("Groceries\n\nmilk\neggs\n\nCall mom\n\nBook flights\n", "Groceries\n\nmilk\neggs\nbread\n\nCall mom\n\nBook flights\n",
         "Groceries\n\nmilk\neggs\n\nCall mom\n\nBook flights to Jeju\n", "Groceries\n\nmilk\neggs\nbread\n\nCall mom\n\nBook flights to Jeju\n"),
        ("장보기\n우유\n계란\n\n할 일\n엄마께 전화\n", "장보기\n우유\n계란\n빵\n\n할 일\n엄마께 전화\n",
         "장보기\n우유\n계란\n\n할 일\n아빠께 전화\n", "장보기\n우유\n계란\n빵\n\n할 일\n아빠께 전화\n"),
    ])
    func differentParagraphs(base: String, ours: String, theirs: String, merged: String) {
        #expect(TextMerge.merge(base: base, ours: ours, theirs: theirs) == .merged(merged))
    }

    @Test("one side inserts at the top, the other at the bottom")
    func insertionsAtBothEnds() {
        let base = "one\ntwo\nthree\n"
        #expect(TextMerge.merge(base: base, ours: "zero\n" + base, theirs: base + "four\n")
            == .merged("zero\none\ntwo\nthree\nfour\n"))
    }

    @Test("deletions on both sides apply, including the same line deleted twice", arguments: [
        ("a\nc\nd\ne\nf\ng\n", "a\nb\nc\nd\ne\ng\n", "a\nc\nd\ne\ng\n"),
        ("a\nb\nd\ne\nf\n", "a\nb\nd\ne\nf\ng\n", "a\nb\nd\ne\nf\n"),
    ])
    func deletions(ours: String, theirs: String, merged: String) {
        #expect(TextMerge.merge(base: "a\nb\nc\nd\ne\nf\ng\n", ours: ours, theirs: theirs) == .merged(merged))
    }

    @Test("the same change made on both sides is taken once")
    func identicalChanges() {
        let base = "title\nbody\nfooter\n"
        let both = "title\nnew body\nmore\nfooter\n"
        #expect(TextMerge.merge(base: base, ours: both, theirs: both) == .merged(both))
        #expect(TextMerge.merge(base: base, ours: "title\nbody\nfooter\nend\n", theirs: "title\nbody\nfooter\nend\n")
            == .merged("title\nbody\nfooter\nend\n"))
    }

    @Test("different changes to the same line conflict")
    func sameLineConflict() {
        let base = "a\nb\nc\n"
        #expect(TextMerge.merge(base: base, ours: "a\nB1\nc\n", theirs: "a\nB2\nc\n") == .conflict)
        #expect(TextMerge.merge(base: base, ours: "a\nc\n", theirs: "a\nB2\nc\n") == .conflict, "delete against edit")
        #expect(TextMerge.merge(base: base, ours: "a\nx\nb\nc\n", theirs: "a\ny\nb\nc\n") == .conflict, "two insertions at one place")
    }

    @Test("changes to directly adjacent lines conflict, as in git; one line apart they merge")
    func adjacentLines() {
        let base = "a\nb\nc\nd\n"
        #expect(TextMerge.merge(base: base, ours: "a\nB\nc\nd\n", theirs: "a\nb\nC\nd\n") == .conflict)
        #expect(TextMerge.merge(base: base, ours: "a\nb\nx\nc\nd\n", theirs: "a\nb\nC\nd\n") == .conflict, "insertion above an edit")
        #expect(TextMerge.merge(base: base, ours: "A\nb\nc\nd\n", theirs: "a\nb\nC\nd\n") == .merged("A\nb\nC\nd\n"))
    }

    @Test("when one side is unchanged the other is returned byte for byte")
    func oneSideUnchanged() {
        let base = "x\ny\n"
        let edited = "x\r\ny\n\u{0}\n한글\nno newline"
        #expect(TextMerge.merge(base: base, ours: base, theirs: edited) == .merged(edited))
        #expect(TextMerge.merge(base: base, ours: edited, theirs: base) == .merged(edited))
        #expect(TextMerge.merge(base: base, ours: base, theirs: base) == .merged(base))
        #expect(TextMerge.merge(base: base, ours: "", theirs: base) == .merged(""))
    }

    @Test("an empty base: one side's text is taken, two different texts conflict")
    func emptyBase() {
        #expect(TextMerge.merge(base: "", ours: "hello\n", theirs: "") == .merged("hello\n"))
        #expect(TextMerge.merge(base: "", ours: "hello\n", theirs: "hello\n") == .merged("hello\n"))
        #expect(TextMerge.merge(base: "", ours: "hello\n", theirs: "bye\n") == .conflict)
        #expect(TextMerge.merge(base: "", ours: "", theirs: "") == .merged(""))
    }

    @Test("a last line without a newline is a line of its own")
    func noTrailingNewline() {
        #expect(TextMerge.merge(base: "a\nb\nc", ours: "A\nb\nc", theirs: "a\nb\nC") == .merged("A\nb\nC"))
        #expect(TextMerge.merge(base: "a\nb\nc", ours: "A\nb\nc", theirs: "a\nb\nc\n") == .merged("A\nb\nc\n"))
        #expect(TextMerge.merge(base: "a\nb\nc", ours: "a\nb\nc\n", theirs: "a\nb\ncc") == .conflict,
                "adding the newline changes the last line")
        #expect(TextMerge.merge(base: "a\nb\nc\n", ours: "a\nb\nc", theirs: "A\nb\nc\n") == .merged("A\nb\nc"))
    }

    @Test("CRLF line ends are kept, and differ from LF")
    func crlf() {
        let base = "one\r\ntwo\r\nthree\r\nfour\r\n"
        #expect(TextMerge.merge(base: base, ours: "ONE\r\ntwo\r\nthree\r\nfour\r\n", theirs: "one\r\ntwo\r\nthree\r\nFOUR\r\n")
            == .merged("ONE\r\ntwo\r\nthree\r\nFOUR\r\n"))
        #expect(TextMerge.merge(base: base, ours: "one\r\ntwo\nthree\r\nfour\r\n", theirs: "one\r\n2\r\nthree\r\nfour\r\n")
            == .conflict, "a line whose end became LF was changed")
    }

    @Test("NUL bytes are ordinary bytes")
    func nulBytes() {
        let base = "a\u{0}b\nmiddle\nc\u{0}\n"
        #expect(TextMerge.merge(base: base, ours: "a\u{0}B\nmiddle\nc\u{0}\n", theirs: "a\u{0}b\nmiddle\nc\u{0}\u{0}\n")
            == .merged("a\u{0}B\nmiddle\nc\u{0}\u{0}\n"))
        #expect(TextMerge.merge(base: "\u{0}\n", ours: "\u{0}\u{0}\n", theirs: "\n") == .conflict)
    }

    @Test("lines are compared by bytes: a decomposed é is a change from a precomposed one")
    func bytesNotGraphemes() {
        let precomposed = "caf\u{E9}\nmenu\n", decomposed = "cafe\u{301}\nmenu\n"
        #expect(precomposed == decomposed, "Swift's String equality would hide the edit")
        let outcome = TextMerge.merge(base: precomposed, ours: decomposed, theirs: "caf\u{E9}\nmenu!\n")
        #expect(outcome == .conflict, "adjacent lines")
        let spaced = TextMerge.merge(base: "caf\u{E9}\n-\nmenu\n", ours: "cafe\u{301}\n-\nmenu\n", theirs: "caf\u{E9}\n-\nmenu!\n")
        #expect(spaced == .merged("cafe\u{301}\n-\nmenu!\n"))
        #expect(spaced != .merged("caf\u{E9}\n-\nmenu!\n"), "outcomes compare bytes too")
        #expect(TextMerge.merge(base: precomposed, ours: decomposed, theirs: "caf\u{E9}\nmenu\nx\n")
            == .merged("cafe\u{301}\nmenu\nx\n"))
    }

    @Test("merging is symmetric on the hand-written cases")
    func handWrittenSymmetry() {
        let cases = [("a\nb\nc\n", "a\nB\nc\n", "a\nb\nC\n"), ("a\nb\nc\n", "A\nb\nc\n", "a\nb\nC\n"), ("", "x\n", "x\n"),
                     ("a\nb", "a\nb\n", "a\nb\nc"), ("1\n2\n3\n4\n5\n", "1\n3\n4\n5\n", "1\n2\n3\n4\n")]
        for (base, one, other) in cases {
            #expect(TextMerge.merge(base: base, ours: one, theirs: other) == TextMerge.merge(base: base, ours: other, theirs: one))
        }
    }

    @Test("two 100 KB texts with a few edits each merge to both sets of edits")
    func largeTexts() {
        let base = (0..<2_000).map { "Line \($0): the quick brown fox jumps over the lazy dog.\n" }
        var ours = base, theirs = base, expected = base
        for index in [10, 700, 1_500] { ours[index] = "ours \(index)\n"; expected[index] = ours[index] }
        for index in [300, 1_200, 1_999] { theirs[index] = "theirs \(index)\n"; expected[index] = theirs[index] }
        ours.insert("inserted by ours\n", at: 1_000); expected.insert("inserted by ours\n", at: 1_000)
        theirs.remove(at: 1_800); expected.remove(at: 1_801)
        let outcome = TextMerge.merge(base: base.joined(), ours: ours.joined(), theirs: theirs.joined())
        #expect(base.joined().utf8.count > 100_000)
        #expect(outcome == .merged(expected.joined()))
    }
}

// MARK: - Random cases

/// Random merges checked against `git merge-file` and against properties any merge must have.
@Suite("Three-way merge on random texts")
struct TextMergePropertyTests {
    /// Distinct base lines, and sides that only delete lines or put in lines from a small shared pool
    /// (so both often make the same change): every diff has a single answer, so this checks the merge
    /// rules alone, whatever the diff.
    @Test("agrees with git merge-file on texts whose diffs are unambiguous", .enabled(if: Git.isAvailable))
    func gitOracleDistinctLines() throws {
        let pool = (0..<3).map { "new \($0)\n" } + ["노트 \n", "x\r\n"]
        try expectAgreementWithGit(seed: 0x5EED_D1FF, cases: 300, pool: pool) { random in
            (0..<random.below(10)).map { "line \($0)\n" }
        }
    }

    /// Unrestricted: a line may match many others, so the diff's choices matter as much as the merge
    /// rules. The diff is a port of git's, which is why this agrees exactly too.
    @Test("agrees with git merge-file on texts made of a few repeated lines", .enabled(if: Git.isAvailable))
    func gitAgreementOnRepetitiveLines() throws {
        let pool = ["a\n", "b\n", "c\n", "\n", "é\n", "e\u{301}\n", "a\r\n"]
        try expectAgreementWithGit(seed: 0xD1FF_3, cases: 300, pool: pool) { random in
            (0..<random.below(12)).map { _ in pool[random.below(random.below(2) == 0 ? 3 : pool.count)] }
        }
    }

    /// Memo-like texts: sentences, blank lines and repeated bullets, with a few edits on each side.
    @Test("agrees with git merge-file on memo-like texts", .enabled(if: Git.isAvailable))
    func gitAgreementOnMemos() throws {
        let pool = (0..<40).map { "sentence \($0)\n" } + Array(repeating: "\n", count: 20) + ["- item\n", "- item\n", "}\n"]
        try expectAgreementWithGit(seed: 0x3E30, cases: 150, pool: pool, editPercent: 8) { random in
            (0..<random.below(60)).map { _ in pool[random.below(pool.count)] }
        }
    }

    @Test("symmetry, unchanged sides, identical sides, and no inserted line lost")
    func invariants() {
        var random = SplitMix64(seed: 0x1A7A_11A7)
        let pool = ["a\n", "b\n", "\n", "\u{0}\n", "é\n", "e\u{301}\n", "a\r\n", "a"]
        for _ in 0..<500 {
            let baseLines = (0..<random.below(16)).map { _ in pool[random.below(3)] }
            let (base, ours, theirs) = random.mergeCase(baseLines: baseLines, pool: pool)
            let outcome = TextMerge.merge(base: base, ours: ours, theirs: theirs)
            #expect(outcome == TextMerge.merge(base: base, ours: theirs, theirs: ours), "symmetry")
            #expect(TextMerge.merge(base: base, ours: ours, theirs: base) == .merged(ours))
            #expect(TextMerge.merge(base: base, ours: base, theirs: theirs) == .merged(theirs))
            #expect(TextMerge.merge(base: base, ours: ours, theirs: ours) == .merged(ours))
            if case .merged(let merged) = outcome {
                // Every line a side added is still there: at least as many copies as that side gained.
                let (baseCounts, mergedCounts) = (lineCounts(base), lineCounts(merged))
                for side in [ours, theirs] {
                    for (line, count) in lineCounts(side) {
                        #expect(mergedCounts[line, default: 0] >= count - baseCounts[line, default: 0])
                    }
                }
            }
        }
    }

    /// `cases` random merges agree with git's: each of the base lines `baseLines` makes, edited on both
    /// sides with lines from `pool` (`SplitMix64.mergeCase`).
    private func expectAgreementWithGit(seed: UInt64, cases: Int, pool: [String], editPercent: Int = 25,
                                        baseLines: (inout SplitMix64) -> [String]) throws {
        var random = SplitMix64(seed: seed)
        for _ in 0..<cases {
            let lines = baseLines(&random)
            let (base, ours, theirs) = random.mergeCase(baseLines: lines, pool: pool, editPercent: editPercent)
            try expectAgreementWithGit(base: base, ours: ours, theirs: theirs)
        }
    }

    private func expectAgreementWithGit(base: String, ours: String, theirs: String) throws {
        let git = try Git.mergeFile(base: base, ours: ours, theirs: theirs)
        let outcome = TextMerge.merge(base: base, ours: ours, theirs: theirs)
        let inputs = Comment(rawValue: [base, ours, theirs].map(\.debugDescription).joined(separator: " | "))
        if git.conflicts == 0 {
            #expect(outcome == .merged(String(decoding: git.output, as: UTF8.self)), inputs)
        } else {
            #expect(git.conflicts > 0, "git failed rather than reporting conflicts")
            #expect(outcome == .conflict, inputs)
        }
    }

    /// Lines keyed by their bytes, so that "é" and "e\u{301}" are counted apart.
    private func lineCounts(_ text: String) -> [[UInt8]: Int] {
        var counts: [[UInt8]: Int] = [:]
        var line: [UInt8] = []
        for byte in text.utf8 {
            line.append(byte)
            if byte == UInt8(ascii: "\n") { counts[line, default: 0] += 1; line = [] }
        }
        if !line.isEmpty { counts[line, default: 0] += 1 }
        return counts
    }
}

// MARK: - Helpers

/// Random merge cases for the comparisons with git.
extension SplitMix64 {
    /// A number in `0..<bound`; the slight modulo bias does not matter here.
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

    /// A base and two random edits of it; any text may lose its last newline.
    mutating func mergeCase(baseLines: [String], pool: [String], editPercent: Int = 25) -> (String, String, String) {
        let ours = edit(baseLines, pool: pool, editPercent), theirs = edit(baseLines, pool: pool, editPercent)
        return (text(baseLines), text(ours), text(theirs))
    }

    /// Lines are dropped or replaced, and lines from `pool` put in between, about `percent` of the time.
    private mutating func edit(_ lines: [String], pool: [String], _ percent: Int) -> [String] {
        var edited: [String] = []
        for line in lines + [nil] {
            if below(200) < percent { edited += (0...below(2)).map { _ in pool[below(pool.count)] } }
            guard let line else { break }
            switch below(100) {
            case ..<(percent / 2): continue
            case ..<percent: edited.append(pool[below(pool.count)])
            default: edited.append(line)
            }
        }
        return edited
    }

    private mutating func text(_ lines: [String]) -> String {
        let joined = lines.joined()
        return below(5) == 0 && joined.hasSuffix("\n") ? String(joined.utf8.dropLast())! : joined
    }
}

/// Runs the installed git as the reference implementation.
private enum Git {
    static let isAvailable: Bool = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").contains { FileManager.default.isExecutableFile(atPath: "\($0)/git") }
    }()

    /// `git merge-file -p ours base theirs` on temporary files; git exits with the number of conflicts.
    static func mergeFile(base: String, ours: String, theirs: String) throws -> (conflicts: Int32, output: Data) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("textmerge-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let files = [("ours", ours), ("base", base), ("theirs", theirs)].map { name, text in
            (directory.appendingPathComponent(name), Data(text.utf8))
        }
        for (url, data) in files { try data.write(to: url) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["git", "merge-file", "-p"] + files.map(\.0.path)
        // Keep the user's merge settings out of it: only the default behaviour is the reference.
        process.environment = ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
                               "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "HOME": directory.path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, data)
    }
}
