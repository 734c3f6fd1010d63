// MARK: - Selection

/// The selected memo or its index changed; `index` is null when the memo is not in the filtered list.
public struct SelectionDidChange: NotificationType, Hashable {
    public static let method = "selection/didChange"
    public static let summary = "The selection changed: `id` null means nothing is selected; `index` null means the memo is outside the filtered list."
    public var id: MemoID?
    public var index: Int?
    public init(id: MemoID?, index: Int?) {
        self.id = id
        self.index = index
    }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)  // explicit nulls: they carry meaning
        try container.encode(index, forKey: .index)
    }
    public static let schema = Schema.object([
        .required("id", .nullable(.memoID)), .required("index", .nullable(.index)),
    ])
    public static let example = SelectionDidChange(id: Memo.example.id, index: 0)
}

// MARK: - Detail pane

/// The detail pane shows `memo`, editable.
public struct DetailDidShow: NotificationType, Hashable {
    public static let method = "detail/didShow"
    public static let summary = "The detail pane shows `memo`; sent when another memo is shown or the shown one changed by other means than this client's memo/update."
    public var memo: Memo
    public var editable: Bool
    public init(memo: Memo) {
        self.memo = memo
        self.editable = true
    }
    public static let schema = Schema.object([.required("memo", .reference("Memo")), .required("editable", .boolean)])
    public static let example = DetailDidShow(memo: .example)
}

/// The detail pane is empty and not editable: there is no memo to show.
public struct DetailDidClear: NotificationType, Hashable {
    public static let method = "detail/didClear"
    public static let summary = "The detail pane is empty and read-only: no memo is selected."
    public var editable: Bool
    public init() { editable = false }
    public static let schema = Schema.object([.required("editable", .boolean)])
    public static let example = DetailDidClear()
}

// MARK: - Progress

/// LSP work-done progress for long requests that carried a `workDoneToken`.
public struct ProgressNotification: NotificationType, Hashable {
    public static let method = "$/progress"
    public static let summary = "Work-done progress (LSP): begin, report with a percentage, end."
    public var token: ProgressToken
    public var value: WorkDoneProgress

    public init(token: ProgressToken, value: WorkDoneProgress) {
        self.token = token
        self.value = value
    }

    public static let schema = Schema.object([
        .required("token", .progressToken),
        .required("value", .object([
            .required("kind", .enumeration(["begin", "report", "end"])),
            .optional("title", .string()),
            .optional("message", .string()),
            .optional("percentage", .integer(minimum: 0)),
            .optional("cancellable", .boolean),
        ])),
    ])
    public static let example = ProgressNotification(
        token: .string("import-1"), value: WorkDoneProgress(kind: .report, message: "5000 of 10000", percentage: 50))
}

/// The `value` of a `$/progress` notification.
public struct WorkDoneProgress: Codable, Sendable, Hashable {
    /// Which of a piece of work's progress reports this is: its first, one in between, or its last.
    public enum Kind: String, Codable, Sendable { case begin, report, end }
    public var kind: Kind
    public var title: String?
    public var message: String?
    public var percentage: Int?
    public var cancellable: Bool?

    public init(kind: Kind, title: String? = nil, message: String? = nil, percentage: Int? = nil, cancellable: Bool? = nil) {
        self.kind = kind
        self.title = title
        self.message = message
        self.percentage = percentage
        self.cancellable = cancellable
    }
}
