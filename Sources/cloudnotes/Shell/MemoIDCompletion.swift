import ArgumentParser
import CloudNotesCommandLine
import CloudNotesStore
import Foundation

// MARK: - Completing memo ids

/// Shell completion of memo ids: the short ids of the memos in the store the command line names.
enum MemoIDCompletion {
    /// Live memos' ids.
    static let kind = kind(among: .live)
    /// The ids of memos in the trash, as `trash` prints them.
    static let trashKind = kind(among: .trash)
    /// The ids of live memos and of memos in the trash: those that have a history.
    static let historyKind = kind(among: .liveOrTrash)

    private static func kind(among set: MemoStore.MemoSet) -> CompletionKind {
        .custom { words, _, prefix in candidates(words: words, prefix: prefix, among: set) }
    }

    /// Ids of `set` starting with `prefix`, as `list` prints them (`ShortIDs`), or longer when more was typed.
    ///
    /// Completion only reads: it never creates, migrates or locks a store.
    static func candidates(words: [String], prefix: String, among set: MemoStore.MemoSet = .live) -> [String] {
        let path = StoreOptions.storePath(flag: storeFlag(in: words))
        guard FileManager.default.fileExists(atPath: path),
              let store = try? MemoStore(path: path, readOnly: true),
              let ids = try? store.memoIDs(startingWith: prefix.lowercased(), limit: 500, among: set),
              let shortIDs = try? ShortIDs(store: store, among: set)
        else { return [] }
        return ids.map { String($0.prefix(max(shortIDs.shortID($0).count, prefix.count))) }
    }

    /// The value of `--store` in the words of a command line, if any.
    static func storeFlag(in words: [String]) -> String? {
        for (index, word) in words.enumerated() {
            if word == "--store", index + 1 < words.count { return words[index + 1] }
            if word.hasPrefix("--store=") { return String(word.dropFirst("--store=".count)) }
        }
        return nil
    }
}
