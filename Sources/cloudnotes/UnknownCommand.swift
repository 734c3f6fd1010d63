import Foundation

// MARK: - A word that is no subcommand

/// A first argument that names no subcommand: without this, `serve` (the default subcommand) took it
/// for an argument of its own and printed its usage, for a typo as for `cloudnotes search`.
struct UnknownCommand {
    let word: String
    /// The subcommand the word is nearest to, when it is near enough to be a typo of it.
    let suggestion: String?

    /// Nil when `arguments` start with a subcommand in `known`, with an option, or with nothing at all
    /// (plain `cloudnotes` serves).
    init?(_ arguments: [String], known: [String]) {
        guard let first = arguments.first, !first.hasPrefix("-"), !known.contains(first) else { return nil }
        word = first
        let nearest = known.map { ($0, Self.distance(first, $0)) }.min { $0.1 < $1.1 }
        suggestion = nearest.flatMap { $0.1 <= max(1, $0.0.count / 3) ? $0.0 : nil }
    }

    /// Says so, as a usage error (exit 64).
    func exit() -> Never {
        let hint = suggestion.map { " (did you mean '\($0)'?)" } ?? "; see 'cloudnotes help'"
        FileHandle.standardError.write(Data("cloudnotes: unknown command '\(word)'\(hint)\n".utf8))
        Foundation.exit(64)
    }

    /// The edit distance between two words (insertions, deletions, substitutions, and swaps of two
    /// neighbouring letters, the commonest typo).
    static func distance(_ left: String, _ right: String) -> Int {
        let a = Array(left), b = Array(right)
        var rows = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { rows[i][0] = i }
        for j in 0...b.count { rows[0][j] = j }
        for i in stride(from: 1, through: a.count, by: 1) {
            for j in stride(from: 1, through: b.count, by: 1) {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                rows[i][j] = min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    rows[i][j] = min(rows[i][j], rows[i - 2][j - 2] + 1)
                }
            }
        }
        return rows[a.count][b.count]
    }
}
