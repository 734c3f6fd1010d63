import CloudNotesProtocol
import CloudNotesStore
import Foundation

// MARK: - Import

/// Reads memos in the original app's format and adds them to the store, all or nothing.
public struct MemoImporter: Sendable {
    let store: MemoStore

    public init(store: MemoStore) { self.store = store }

    /// Validates every entry of a `memo/import` request; throws, naming the entry at fault, before anything is stored.
    public func entries(of request: ImportRequest) throws(ResponseError) -> [ImportEntry] {
        switch (request.path, request.memos) {
        case (let path?, nil):
            return try Self.entries(inFileAt: path)
        case (nil, let memos?):
            return memos
        default:
            throw .invalidParams(param: nil, "give exactly one of 'path' and 'memos'")
        }
    }

    /// Stores `entries`; reports progress as a count of stored entries and stops (storing none) when cancelled.
    public func store(
        _ entries: [ImportEntry], isCancelled: @escaping @Sendable () -> Bool, progress: @escaping @Sendable (Int) -> Void
    ) throws(ResponseError) -> Int {
        let memos = entries.map { MemoStore.NewMemo(text: $0.memoText, modifiedAt: $0.lastModified * 1000) }
        do {
            return try store.importMemos(memos, isCancelled: isCancelled, progress: progress)
        } catch {
            throw ResponseError.from(error, presenter: MemoPresenter())
        }
    }

    static func entries(inFileAt path: String) throws(ResponseError) -> [ImportEntry] {
        let data: Data
        do {
            // The path is taken literally: no tilde or variable expansion, no shell.
            data = try Data(contentsOf: URL(fileURLWithPath: path), options: .mappedIfSafe)
        } catch {
            throw .importInvalid("cannot read the file: \((error as NSError).localizedDescription)", path: path)
        }
        guard String(validating: data, as: UTF8.self) != nil else {
            throw .importInvalid("the file is not UTF-8 text", path: path)
        }
        do {
            return try JSONDecoder().decode([ImportEntry].self, from: data)
        } catch let error as ResponseError {
            throw .importInvalid(error.data?["reason"]?.stringValue ?? error.message, index: error.data?["index"]?.intValue, path: path)
        } catch DecodingError.typeMismatch(_, let context) where context.codingPath.isEmpty {
            throw .importInvalid("the file is not a JSON array of memos", path: path)
        } catch {
            throw .importInvalid("the file is not JSON", path: path)
        }
    }
}
