/// A line-based three-way merge of memo texts, as `git merge-file` does it.
///
/// Both sides are diffed against the base with a port of git's xdiff (Myers in linear space, with its
/// line discarding, cost cap and hunk sliding), so that git and both devices of a sync agree on where
/// each change sits. Changes that overlap or merely touch the same base lines conflict, unless both
/// sides made them identically. Lines are compared by their UTF-8 bytes, terminators included.
public enum TextMerge: Sendable {
    /// What a merge of two sides comes to.
    public enum Outcome: Sendable, Equatable {
        /// Both sides' changes applied; the merged text.
        case merged(String)
        /// The sides changed the same lines differently; nothing can be picked without losing one.
        case conflict

        /// Equal when both conflict or both merged to the same bytes ("é" and "e\u{301}" differ here).
        public static func == (lhs: Outcome, rhs: Outcome) -> Bool {
            switch (lhs, rhs) {
            case let (.merged(left), .merged(right)): left.utf8.elementsEqual(right.utf8)
            case (.conflict, .conflict): true
            default: false
            }
        }
    }

    /// Merges the changes from `base` to `ours` and from `base` to `theirs`.
    public static func merge(base: String, ours: String, theirs: String) -> Outcome {
        // Lines are read in place from the strings' UTF-8 storage: copying it was a quarter of the time.
        var (base, ours, theirs) = (base, ours, theirs)
        return base.withUTF8 { base in
            ours.withUTF8 { ours in
                theirs.withUTF8 { theirs in
                    var interner = LineInterner()
                    let (base, ours, theirs) = (interner.lines(of: base), interner.lines(of: ours), interner.lines(of: theirs))
                    let oursHunks = LineDiff.hunks(from: base.ids, to: ours.ids, idCount: interner.count)
                    let theirsHunks = LineDiff.hunks(from: base.ids, to: theirs.ids, idCount: interner.count)
                    return combine(base: base, ours: (ours, oursHunks), theirs: (theirs, theirsHunks))
                }
            }
        }
    }
}

// MARK: - Merging

/// Base lines `baseStart..<baseEnd` became side lines `sideStart..<sideEnd`.
struct Hunk {
    var baseStart, baseEnd, sideStart, sideEnd: Int
}

extension TextMerge {
    typealias Side = (lines: Lines, hunks: [Hunk])

    /// Walks the base; where hunks of the two sides touch, they form one chunk that must agree.
    static func combine(base: Lines, ours: Side, theirs: Side) -> Outcome {
        var pieces: [UnsafeRawBufferPointer] = [], copied = 0, nextOurs = 0, nextTheirs = 0
        while nextOurs < ours.hunks.count || nextTheirs < theirs.hunks.count {
            let (lower, upper, oursEnd, theirsEnd) = chunk(ours.hunks, nextOurs, theirs.hunks, nextTheirs)
            let oursInChunk = ours.hunks[nextOurs..<oursEnd], theirsInChunk = theirs.hunks[nextTheirs..<theirsEnd]
            pieces.append(base[copied..<lower])
            if theirsInChunk.isEmpty {
                pieces.append(ours.lines[sideRange(oursInChunk, lower, upper)])
            } else if oursInChunk.isEmpty {
                pieces.append(theirs.lines[sideRange(theirsInChunk, lower, upper)])
            } else {
                let oursRange = sideRange(oursInChunk, lower, upper), theirsRange = sideRange(theirsInChunk, lower, upper)
                // Both changed here: clean only when they ended with the same lines (git's "identical").
                guard ours.lines.ids[oursRange] == theirs.lines.ids[theirsRange] else { return .conflict }
                pieces.append(ours.lines[oursRange])
            }
            (copied, nextOurs, nextTheirs) = (upper, oursEnd, theirsEnd)
        }
        pieces.append(base[copied..<base.ids.count])
        // Whole lines of valid UTF-8 concatenate to valid UTF-8, so nothing gets repaired here.
        let count = pieces.reduce(0) { $0 + $1.count }
        return .merged(String(unsafeUninitializedCapacity: count) { buffer in
            let output = UnsafeMutableRawBufferPointer(buffer)
            var written = 0
            for piece in pieces where !piece.isEmpty {
                UnsafeMutableRawBufferPointer(rebasing: output[written...]).copyMemory(from: piece)
                written += piece.count
            }
            return written
        })
    }

    /// The base region, and the end of each side's hunks, of the chunk starting at the next hunk.
    ///
    /// A hunk joins while it starts at or before the region's end, so abutting changes conflict as in
    /// git; a side's own hunks are a line apart, so they only join through the other side's.
    static func chunk(_ ours: [Hunk], _ i: Int, _ theirs: [Hunk], _ j: Int)
        -> (lower: Int, upper: Int, oursEnd: Int, theirsEnd: Int) {
        let lower = min(i < ours.count ? ours[i].baseStart : .max, j < theirs.count ? theirs[j].baseStart : .max)
        var upper = lower, i = i, j = j
        while true {
            if i < ours.count, ours[i].baseStart <= upper {
                upper = max(upper, ours[i].baseEnd); i += 1
            } else if j < theirs.count, theirs[j].baseStart <= upper {
                upper = max(upper, theirs[j].baseEnd); j += 1
            } else {
                return (lower, upper, i, j)
            }
        }
    }

    /// The side's lines standing for base `lower..<upper`, which holds all of `hunks` (at least one).
    static func sideRange(_ hunks: ArraySlice<Hunk>, _ lower: Int, _ upper: Int) -> Range<Int> {
        let first = hunks.first!, last = hunks.last!
        return (lower + first.sideStart - first.baseStart)..<(upper + last.sideEnd - last.baseEnd)
    }
}
