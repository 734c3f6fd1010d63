import ArgumentParser

// MARK: - mcp

/// `cloudnotes mcp`'s options: parsed by `cloudnotes` for its help and checks, and again by
/// `cloudnotes-mcp`, which serves.
public struct MCPOptions: ParsableArguments {
    public static let abstract = "Serve the store to AI assistants over the Model Context Protocol on stdin and stdout."
    public static let discussion = """
        Register it in an MCP client as {"command": "cloudnotes", "args": ["mcp"]}. It offers the tools \
        search_memos, list_memos, read_memo, create_memo, edit_memo and delete_memo, and each memo as the \
        resource cloudnotes://memo/<id>. Editors with the same store open see its changes as they are made. \
        It runs cloudnotes-mcp, installed beside cloudnotes.
        """

    @OptionGroup public var store: StoreOptions
    @OptionGroup public var logging: LogOptions
    @OptionGroup public var history: HistoryOptions

    @Flag(name: .long, help: "Offer only the tools that read (search, list, read): the assistant cannot change a memo.")
    public var readOnly = false

    public init() {}
}
