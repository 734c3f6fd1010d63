// MARK: - Diffing

/// Myers' O(ND) diff in linear space, ported from git's xdiff (xprepare.c, xdiffi.c) so hunks match.
///
/// Not ported: xdiff's "good snake" shortcut, which only fires past the cost cap on texts of more
/// than about 65,000 lines in all; the cost cap itself is kept, so huge rewrites stay fast.
struct LineDiff {
    private let a: [Int], b: [Int]
    private var changedA: ChangeMarks, changedB: ChangeMarks
    /// The lines left for Myers after trimming common ends and dropping unmatchable ones (`rindex`).
    private var keptA: [Int] = [], keptB: [Int] = [], keptIDsA: [Int] = [], keptIDsB: [Int] = []

    static func hunks(from a: [Int], to b: [Int], idCount: Int) -> [Hunk] {
        var diff = LineDiff(a: a, b: b, changedA: ChangeMarks(count: a.count), changedB: ChangeMarks(count: b.count))
        diff.keepMatchableLines(idCount: idCount)
        diff.compareKeptLines()
        diff.changedA.compact(ids: a, other: diff.changedB)
        diff.changedB.compact(ids: b, other: diff.changedA)
        return diff.hunks()
    }

    /// xdiff's `xdl_trim_ends` and `xdl_cleanup_records`: lines Myers need not (or should not) see.
    private mutating func keepMatchableLines(idCount: Int) {
        let limit = min(a.count, b.count)
        var head = 0, tail = 0
        while head < limit, a[head] == b[head] { head += 1 }
        while tail < limit - head, a[a.count - 1 - tail] == b[b.count - 1 - tail] { tail += 1 }
        (keptA, keptIDsA) = Self.keep(a, head..<a.count - tail, other: b, marks: &changedA, idCount: idCount)
        (keptB, keptIDsB) = Self.keep(b, head..<b.count - tail, other: a, marks: &changedB, idCount: idCount)
    }

    /// Marks lines with no match changed; lines with many matches too when among unmatched ones.
    private static func keep(_ ids: [Int], _ middle: Range<Int>, other: [Int], marks: inout ChangeMarks,
                             idCount: Int) -> ([Int], [Int]) {
        var countInOther = [Int](repeating: 0, count: idCount)
        for id in other { countInOther[id] += 1 }
        let many = min(roughSquareRoot(ids.count), 1024)
        var kinds = [UInt8](repeating: 0, count: ids.count)  // 0: no match, 1: some, 2: many
        for i in middle { kinds[i] = countInOther[ids[i]] == 0 ? 0 : countInOther[ids[i]] >= many ? 2 : 1 }
        var kept: [Int] = [], keptIDs: [Int] = []
        for i in middle {
            if kinds[i] == 1 || (kinds[i] == 2 && !isAmidUnmatched(kinds, i, middle)) {
                kept.append(i); keptIDs.append(ids[i])
            } else {
                marks[i] = true
            }
        }
        return (kept, keptIDs)
    }

    /// xdiff's `xdl_clean_mmatch`: is a many-matches line in a run mostly made of unmatched lines?
    private static func isAmidUnmatched(_ kinds: [UInt8], _ i: Int, _ middle: Range<Int>) -> Bool {
        func run(_ step: Int, _ bound: Int) -> (unmatched: Int, many: Int) {
            var unmatched = 0, many = 1, k = i + step
            while step < 0 ? k >= bound : k <= bound, kinds[k] != 1 {
                if kinds[k] == 0 { unmatched += 1 } else { many += 1 }
                k += step
            }
            return (unmatched, many)
        }
        let before = run(-1, max(middle.lowerBound, i - 100))
        guard before.unmatched > 0 else { return false }
        let after = run(1, min(middle.upperBound - 1, i + 100))
        guard after.unmatched > 0 else { return false }
        let many = before.many + after.many
        return many * 4 < many + before.unmatched + after.unmatched
    }

    /// xdiff's `xdl_recs_cmp`, with a stack of boxes instead of recursion.
    private mutating func compareKeptLines() {
        let (keptIDsA, keptIDsB) = (self.keptIDsA, self.keptIDsB)
        let (n, m) = (keptIDsA.count, keptIDsB.count)
        // Raw memory, as the search loops are the hot spot of large diffs: no bounds or uniqueness checks.
        let diagonals = UnsafeMutableBufferPointer<Int>.allocate(capacity: 2 * (n + m + 3))
        diagonals.initialize(repeating: 0)
        defer { diagonals.deallocate() }
        keptIDsA.withUnsafeBufferPointer { a in
            keptIDsB.withUnsafeBufferPointer { b in
                let search = MiddleSnakeSearch(a: a, b: b, forward: diagonals.baseAddress! + m + 1,
                                               backward: diagonals.baseAddress! + n + 2 * m + 4,
                                               maxCost: max(256, Self.roughSquareRoot(n + m + 3)))
                var boxes = [(0, n, 0, m, false)]
                while let box = boxes.popLast() {
                    var (off1, lim1, off2, lim2) = (box.0, box.1, box.2, box.3)
                    while off1 < lim1, off2 < lim2, a[off1] == b[off2] { off1 += 1; off2 += 1 }
                    while off1 < lim1, off2 < lim2, a[lim1 - 1] == b[lim2 - 1] { lim1 -= 1; lim2 -= 1 }
                    if off1 == lim1 {
                        for k in off2..<lim2 { changedB[keptB[k]] = true }
                    } else if off2 == lim2 {
                        for k in off1..<lim1 { changedA[keptA[k]] = true }
                    } else {
                        let split = search.split(off1, lim1, off2, lim2, needMinimal: box.4)
                        boxes.append((split.x, lim1, split.y, lim2, split.minimalAfter))
                        boxes.append((off1, split.x, off2, split.y, split.minimalBefore))
                    }
                }
            }
        }
    }

    /// xdiff's `xdl_build_script`: runs of changed lines, split where an unchanged line pairs up.
    private func hunks() -> [Hunk] {
        var hunks: [Hunk] = [], i = 0, j = 0
        while i < a.count || j < b.count {
            guard changedA[i] || changedB[j] else { i += 1; j += 1; continue }
            let (startA, startB) = (i, j)
            while changedA[i] { i += 1 }
            while changedB[j] { j += 1 }
            hunks.append(Hunk(baseStart: startA, baseEnd: i, sideStart: startB, sideEnd: j))
        }
        return hunks
    }

    /// xdiff's `xdl_bogosqrt`: a power of two near √n.
    private static func roughSquareRoot(_ n: Int) -> Int {
        var root = 1, n = n
        while n > 0 { root <<= 1; n >>= 2 }
        return root
    }
}

/// xdiff's `xdl_split` over the kept lines: furthest-reaching x by diagonal (which runs negative, so
/// the pointers sit mid-buffer) for the forward search from a box's top and the backward one from its end.
struct MiddleSnakeSearch {
    typealias Split = (x: Int, y: Int, minimalBefore: Bool, minimalAfter: Bool)

    let a: UnsafeBufferPointer<Int>, b: UnsafeBufferPointer<Int>
    let forward: UnsafeMutablePointer<Int>, backward: UnsafeMutablePointer<Int>
    let maxCost: Int

    /// The middle snake of a box, or past the cost cap the furthest-reaching point (a non-minimal split).
    func split(_ off1: Int, _ lim1: Int, _ off2: Int, _ lim2: Int, needMinimal: Bool) -> Split {
        let (dmin, dmax, fmid, bmid) = (off1 - lim2, lim1 - off2, off1 - off2, lim1 - lim2)
        let odd = (fmid - bmid) & 1 != 0
        var (fmin, fmax, bmin, bmax) = (fmid, fmid, bmid, bmid)
        forward[fmid] = off1
        backward[bmid] = lim1
        for cost in 1... {
            // Widen the diagonal range by one, or narrow it where it leaves the box; pad with sentinels.
            if fmin > dmin { fmin -= 1; forward[fmin - 1] = -1 } else { fmin += 1 }
            if fmax < dmax { fmax += 1; forward[fmax + 1] = -1 } else { fmax -= 1 }
            var d = fmax
            while d >= fmin {
                var x = forward[d - 1] >= forward[d + 1] ? forward[d - 1] + 1 : forward[d + 1], y = x - d
                while x < lim1, y < lim2, a[x] == b[y] { x += 1; y += 1 }
                forward[d] = x
                if odd, bmin <= d, d <= bmax, backward[d] <= x { return (x, y, true, true) }
                d -= 2
            }
            if bmin > dmin { bmin -= 1; backward[bmin - 1] = .max } else { bmin += 1 }
            if bmax < dmax { bmax += 1; backward[bmax + 1] = .max } else { bmax -= 1 }
            d = bmax
            while d >= bmin {
                var x = backward[d - 1] < backward[d + 1] ? backward[d - 1] : backward[d + 1] - 1, y = x - d
                while x > off1, y > off2, a[x - 1] == b[y - 1] { x -= 1; y -= 1 }
                backward[d] = x
                if !odd, fmin <= d, d <= fmax, x <= forward[d] { return (x, y, true, true) }
                d -= 2
            }
            if !needMinimal, cost >= maxCost { break }
        }
        // Too costly: split where either search got furthest; that half may then be non-minimal.
        var (forwardBest, forwardX) = (-1, -1), (backwardBest, backwardX) = (Int.max, Int.max)
        for d in stride(from: fmax, through: fmin, by: -2) {
            let x = min(forward[d], lim1, lim2 + d)
            if forwardBest < 2 * x - d { (forwardBest, forwardX) = (2 * x - d, x) }
        }
        for d in stride(from: bmax, through: bmin, by: -2) {
            let x = max(off1, backward[d], off2 + d)
            if 2 * x - d < backwardBest { (backwardBest, backwardX) = (2 * x - d, x) }
        }
        if lim1 + lim2 - backwardBest < forwardBest - (off1 + off2) {
            return (forwardX, forwardBest - forwardX, true, false)
        }
        return (backwardX, backwardBest - backwardX, false, true)
    }
}

// MARK: - Sliding hunks

/// Changed-line flags, with an unchanged line before the first and after the last to stop scans.
struct ChangeMarks {
    /// Changed lines `start..<end` (maybe none, just above line `end`), between two unchanged lines.
    struct Group { var start = 0, end = 0 }

    private var storage: [Bool]
    let count: Int
    init(count: Int) { (storage, self.count) = ([Bool](repeating: false, count: count + 2), count) }
    subscript(line: Int) -> Bool {
        get { storage[line + 1] }
        set { storage[line + 1] = newValue }
    }

    /// xdiff's `xdl_change_compact`: slides each group as far down as equal lines allow, then back up
    /// to line up with a change in the other file if it passed one, so equal diffs look the same.
    mutating func compact(ids: [Int], other: ChangeMarks) {
        var group = firstGroup(), otherGroup = other.firstGroup()
        repeat {
            guard group.end > group.start else { continue }
            var size = 0, earliestEnd = 0, metOtherChange = false
            repeat {  // again while sliding swallowed a neighbouring group
                size = group.end - group.start
                while slideUp(&group, ids) { _ = other.previous(&otherGroup) }
                earliestEnd = group.end
                metOtherChange = otherGroup.end > otherGroup.start
                while slideDown(&group, ids) {
                    _ = other.next(&otherGroup)
                    metOtherChange = metOtherChange || otherGroup.end > otherGroup.start
                }
            } while size != group.end - group.start
            if group.end != earliestEnd, metOtherChange {
                while otherGroup.end == otherGroup.start {
                    _ = slideUp(&group, ids)
                    _ = other.previous(&otherGroup)
                }
            }
        } while next(&group) && other.next(&otherGroup)
    }

    func firstGroup() -> Group {
        var group = Group()
        while self[group.end] { group.end += 1 }
        return group
    }

    func next(_ group: inout Group) -> Bool {
        guard group.end < count else { return false }
        group.start = group.end + 1
        group.end = group.start
        while self[group.end] { group.end += 1 }
        return true
    }

    func previous(_ group: inout Group) -> Bool {
        guard group.start > 0 else { return false }
        group.end = group.start - 1
        group.start = group.end
        while self[group.start - 1] { group.start -= 1 }
        return true
    }

    /// Moves the group one line down when its first line equals the line after it.
    mutating func slideDown(_ group: inout Group, _ ids: [Int]) -> Bool {
        guard group.end < count, ids[group.start] == ids[group.end] else { return false }
        self[group.start] = false
        self[group.end] = true
        group.start += 1
        while self[group.end] { group.end += 1 }
        return true
    }

    /// Moves the group one line up when its last line equals the line before it.
    mutating func slideUp(_ group: inout Group, _ ids: [Int]) -> Bool {
        guard group.start > 0, ids[group.start - 1] == ids[group.end - 1] else { return false }
        group.start -= 1
        group.end -= 1
        self[group.start] = true
        self[group.end] = false
        while self[group.start - 1] { group.start -= 1 }
        return true
    }
}
