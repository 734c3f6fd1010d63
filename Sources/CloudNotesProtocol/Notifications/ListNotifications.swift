// MARK: - List pane

/// A row entered the list at `index`.
public struct ListDidInsert: NotificationType, Hashable {
    public static let method = "list/didInsert"
    public static let summary = "A row entered the list at `index`; rows at and below it move down one."
    public var index: Int
    public var row: MemoRow
    public init(index: Int, row: MemoRow) {
        self.index = index
        self.row = row
    }
    public static let schema = Schema.object([.required("index", .index), .required("row", .reference("MemoRow"))])
    public static let example = ListDidInsert(index: 0, row: .example)
}

/// A row changed and moved from `fromIndex` to `toIndex` (which may be equal).
public struct ListDidUpdate: NotificationType, Hashable {
    public static let method = "list/didUpdate"
    public static let summary = "A row changed: remove it at `fromIndex`, then insert `row` at `toIndex`."
    public var fromIndex: Int
    public var toIndex: Int
    public var row: MemoRow
    public init(fromIndex: Int, toIndex: Int, row: MemoRow) {
        self.fromIndex = fromIndex
        self.toIndex = toIndex
        self.row = row
    }
    public static let schema = Schema.object([
        .required("fromIndex", .index), .required("toIndex", .index), .required("row", .reference("MemoRow")),
    ])
    public static let example = ListDidUpdate(fromIndex: 3, toIndex: 0, row: .example)
}

/// The row at `index` left the list.
public struct ListDidRemove: NotificationType, Hashable {
    public static let method = "list/didRemove"
    public static let summary = "The row at `index` left the list; rows below it move up one."
    public var index: Int
    public var id: MemoID
    public init(index: Int, id: MemoID) {
        self.index = index
        self.id = id
    }
    public static let schema = Schema.object([.required("index", .index), .required("id", .memoID)])
    public static let example = ListDidRemove(index: 2, id: Memo.example.id)
}

/// The whole list changed (a filter, an import): fetch it again with `memo/list`.
public struct ListDidReset: NotificationType, Hashable {
    public static let method = "list/didReset"
    public static let summary = "The whole list changed; `total` rows now; re-fetch with memo/list."
    public var total: Int
    public init(total: Int) { self.total = total }
    public static let schema = Schema.object([.required("total", .index)])
    public static let example = ListDidReset(total: 12)
}
