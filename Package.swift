// swift-tools-version: 6.0
import PackageDescription

// Dependencies point one way (ARCHITECTURE.md draws them):
//   cloudnotes → CloudNotesServer → CloudNotesTransport → CloudNotesProtocol → CloudNotesJSON → CloudNotesBytes
//                                 → CloudNotesTransfer → CloudNotesMediator → CloudNotesStore
//                                 → CloudNotesSync → CloudNotesStore
//   cloudnotes-mcp → CloudNotesMCP → MCP (the SDK), CloudNotesServer, CloudNotesTransport, CloudNotesMediator
//   cloudnotes, cloudnotes-mcp → CloudNotesCommandLine (the options they share)
// The protocol types know no I/O, the store knows no JSON-RPC, the mediator knows no pipes.

// The products that several targets depend on.
let logging = Target.Dependency.product(name: "Logging", package: "swift-log")
let grdb = Target.Dependency.product(name: "GRDB", package: "GRDB.swift")

let package = Package(
    name: "CloudNotes",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "cloudnotes", targets: ["cloudnotes"]),
        .executable(name: "cloudnotes-mcp", targets: ["cloudnotes-mcp"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/modelcontextprotocol/swift-sdk", exact: "0.12.1"),
    ],
    targets: [
        // In C, for the processor's vector instructions: the search for the bytes a JSON string must
        // escape (SSE2) and the UTF-8 check (SSSE3).
        .target(name: "CBytes"),
        // The UTF-8 check over `CBytes`: for the lines the server reads, the import files and the text
        // read back from SQLite.
        .target(name: "CloudNotesBytes", dependencies: ["CBytes"]),
        // Reading and writing JSON, without I/O: the strict syntax check, the tree and its decoder, the
        // streaming encoder, the splitter of an import file's array, the pretty-printed export array.
        .target(name: "CloudNotesJSON", dependencies: ["CBytes", "CloudNotesBytes"]),
        // Codable messages, error codes, limits and the method registry; the domain types write their
        // own JSON (`JSONWritable`). No I/O.
        .target(name: "CloudNotesProtocol", dependencies: ["CloudNotesJSON"]),
        // Framing (JSON lines or LSP's Content-Length headers) and the JSON-RPC envelope over file
        // descriptors: messages in, decoded into their request types, and replies out.
        .target(
            name: "CloudNotesTransport",
            dependencies: [
                "CloudNotesProtocol",
                "CloudNotesJSON",
                "CloudNotesBytes",
                logging,
            ]
        ),
        // The libc and SQLite calls Swift cannot reach (`syncfs`, `mallopt`, the variadic `sqlite3_db_config`).
        .target(name: "CShims", linkerSettings: [.linkedLibrary("sqlite3")]),
        // A VFS over SQLite's own that writes a transaction's log frames to the file in one write.
        .target(name: "CSQLiteLogWrites", linkerSettings: [.linkedLibrary("sqlite3")]),
        // The SQLite store: memos, tombstones, change sequence, full-text search, sync's revision history.
        .target(
            name: "CloudNotesStore",
            dependencies: [
                "CSQLiteLogWrites",
                "CShims",
                "CloudNotesBytes",
                grdb,
                // The C API: the hook GRDB does not wrap (`sqlite3_wal_hook`), and statements stepped by hand.
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]
        ),
        // The split view: list, selection and detail, turned into notifications.
        .target(
            name: "CloudNotesMediator",
            dependencies: [
                "CloudNotesProtocol",
                "CloudNotesStore",
                logging,
            ]
        ),
        // Memos in and out of files: import files read as they go, exports to JSON or Markdown (named and
        // errors told as the split view names and tells them).
        .target(
            name: "CloudNotesTransfer",
            dependencies: ["CShims", "CloudNotesBytes", "CloudNotesJSON", "CloudNotesProtocol", "CloudNotesMediator", "CloudNotesStore"]
        ),
        // Sync through a folder, WebDAV or S3, plain or encrypted: the remote layout, the merge rules, the
        // sync itself, and the service the server and the shell both run it through.
        .target(
            name: "CloudNotesSync",
            dependencies: [
                "CloudNotesProtocol",
                "CloudNotesStore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                logging,
            ]
        ),
        // `cloudnotes mcp`: the store's memos as tools and resources for assistants, over the official
        // MCP SDK; the wire vetted with the transport's own checks before the SDK sees a message.
        .target(
            name: "CloudNotesMCP",
            dependencies: [
                "CloudNotesJSON",
                "CloudNotesProtocol",
                "CloudNotesTransport",
                "CloudNotesMediator",
                "CloudNotesStore",
                // For the watcher of other processes' changes, which `serve` runs too.
                "CloudNotesServer",
                .product(name: "MCP", package: "swift-sdk"),
                logging,
            ]
        ),
        // The language-server-style session: lifecycle, dispatch, cancellation, progress.
        .target(
            name: "CloudNotesServer",
            dependencies: [
                "CloudNotesProtocol",
                "CloudNotesTransport",
                "CloudNotesMediator",
                "CloudNotesTransfer",
                "CloudNotesStore",
                "CloudNotesSync",
                logging,
            ]
        ),
        // The options and set-up the executables share: the store, the logs, the history policy, stdout
        // kept for protocol messages.
        .target(
            name: "CloudNotesCommandLine",
            dependencies: [
                "CloudNotesStore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                logging,
            ]
        ),
        .executableTarget(
            name: "cloudnotes",
            dependencies: [
                "CShims",
                "CloudNotesCommandLine",
                "CloudNotesProtocol",
                "CloudNotesMediator",
                "CloudNotesTransfer",
                "CloudNotesServer",
                "CloudNotesStore",
                "CloudNotesSync",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                logging,
            ],
            linkerSettings: [
                // Relative relocations packed (DT_RELR, glibc 2.36+; lld has the option, gold does not):
                // the dynamic loader reads a small table at start-up instead of a large one that otherwise
                // stays in the server's resident memory (measured by bench/run's peak RSS).
                .unsafeFlags(["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs"], .when(platforms: [.linux], configuration: .release)),
            ]
        ),
        // `cloudnotes mcp`'s server, a binary of its own: the MCP SDK links libcurl, whose loading would
        // slow every start of `cloudnotes` (bench/FINDINGS.md).
        .executableTarget(
            name: "cloudnotes-mcp",
            dependencies: [
                "CloudNotesCommandLine",
                "CloudNotesMCP",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // The message-path fuzzer (libFuzzer with -DFUZZING; otherwise it replays corpus files).
        .executableTarget(
            name: "CloudNotesFuzz",
            dependencies: [
                "CloudNotesServer",
                "CloudNotesTransport",
                "CloudNotesStore",
                logging,
            ]
        ),
        .testTarget(name: "CloudNotesProtocolTests", dependencies: ["CloudNotesProtocol"]),
        .testTarget(name: "CloudNotesBytesTests", dependencies: ["CloudNotesBytes", "CloudNotesTestSupport"]),
        .testTarget(name: "CloudNotesJSONTests", dependencies: ["CloudNotesJSON", "CloudNotesProtocol", "CloudNotesTestSupport"]),
        .testTarget(name: "CloudNotesTransportTests", dependencies: ["CloudNotesTransport", "CloudNotesJSON", "CloudNotesTestSupport"]),
        .testTarget(
            name: "CloudNotesTransferTests",
            dependencies: ["CloudNotesTransfer", "CloudNotesProtocol", "CloudNotesStore", "CloudNotesTestSupport"]),
        // What several test targets share (a seeded random generator, temporary stores, stores of older
        // versions, waiting helpers, the two JSON encoders compared).
        .target(name: "CloudNotesTestSupport", dependencies: ["CloudNotesJSON", "CloudNotesProtocol", grdb],
                path: "Tests/CloudNotesTestSupport"),
        .testTarget(name: "CloudNotesStoreTests", dependencies: ["CloudNotesStore", "CSQLiteLogWrites", "CloudNotesTestSupport"]),
        .testTarget(
            name: "CloudNotesSyncTests",
            dependencies: [
                "CloudNotesSync", "CloudNotesStore", "CloudNotesTestSupport",
                // To read a query's plan.
                grdb,
            ],
            // botocore's signer, which SigV4Tests run as the oracle of theirs.
            exclude: ["Oracles"]),
        .testTarget(
            name: "CloudNotesMediatorTests",
            dependencies: [
                "CloudNotesMediator", "CloudNotesStore", "CloudNotesProtocol", "CloudNotesTestSupport",
                // To make the store fail on purpose (a temporary trigger).
                grdb,
            ]),
        .testTarget(
            name: "CloudNotesMCPTests",
            dependencies: ["CloudNotesMCP", "CloudNotesProtocol", .product(name: "MCP", package: "swift-sdk")]),
        .testTarget(
            name: "CloudNotesServerTests",
            dependencies: [
                "CloudNotesServer", "CloudNotesStore", "CloudNotesProtocol", "CloudNotesTransport", "CloudNotesTestSupport",
                grdb, logging,
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
