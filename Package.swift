// swift-tools-version: 6.0
import PackageDescription

// Dependencies point one way:
//   cloudnotes (executable: serve, and the shell commands) → CloudNotesServer → CloudNotesMediator → CloudNotesStore
//                                        ↘ CloudNotesTransport     ↘ CloudNotesProtocol          ↗
//                                        ↘ CloudNotesSync (remotes, segments, merges) ──────────
// CloudNotesJSON (parsing, no I/O) sits below CloudNotesTransport and CloudNotesMediator (import files).
// The protocol types know no I/O, the store knows no JSON-RPC, the mediator knows no pipes.
let package = Package(
    name: "CloudNotes",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "cloudnotes", targets: ["cloudnotes"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        // Codable messages, error codes and the method registry. No I/O.
        .target(name: "CloudNotesProtocol"),
        // Byte work under every line, in C for vector instructions: the search for the bytes a JSON string
        // must escape (SSE2) and the UTF-8 check (SSSE3).
        .target(name: "CJSONBytes"),
        // Reading JSON fast, without I/O: a strict parser into a tree and a decoder of the tree, the UTF-8
        // check, the search for a string's special bytes. Used for requests and for import files.
        .target(name: "CloudNotesJSON", dependencies: ["CJSONBytes"]),
        // Framing (JSON lines or LSP's Content-Length headers) and the JSON-RPC connection over file descriptors.
        .target(
            name: "CloudNotesTransport",
            dependencies: [
                "CloudNotesProtocol",
                "CloudNotesJSON",
                "CJSONBytes",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // A VFS over SQLite's own that writes a transaction's log frames to the file in one write.
        .target(name: "CSQLiteLogWrites", linkerSettings: [.linkedLibrary("sqlite3")]),
        // The SQLite settings Swift cannot reach (`sqlite3_db_config` is variadic).
        .target(name: "CSQLiteDBConfig", linkerSettings: [.linkedLibrary("sqlite3")]),
        // The SQLite store: memos, tombstones, change sequence, full-text search, sync's revision history.
        .target(
            name: "CloudNotesStore",
            dependencies: [
                "CSQLiteLogWrites",
                "CSQLiteDBConfig",
                // The UTF-8 check, for the text read back from SQLite (the standard library's is slower).
                "CloudNotesJSON",
                .product(name: "GRDB", package: "GRDB.swift"),
                // The C API: the hook GRDB does not wrap (`sqlite3_wal_hook`), and statements stepped by hand.
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]
        ),
        // `syncfs(2)`, which Swift's Glibc module does not declare: an export of many files synced at once.
        .target(name: "CFileSync"),
        // The split view: list, selection and detail, turned into notifications.
        .target(
            name: "CloudNotesMediator",
            dependencies: [
                "CFileSync",
                "CloudNotesProtocol",
                "CloudNotesJSON",
                "CloudNotesStore",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Sync through a folder or WebDAV: the remote layout, the merge rules, the sync itself.
        .target(
            name: "CloudNotesSync",
            dependencies: [
                "CloudNotesStore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The language-server-style session: lifecycle, dispatch, cancellation, progress.
        .target(
            name: "CloudNotesServer",
            dependencies: [
                "CloudNotesProtocol",
                "CloudNotesTransport",
                "CloudNotesMediator",
                "CloudNotesStore",
                "CloudNotesSync",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "cloudnotes",
            dependencies: [
                "CloudNotesProtocol",
                "CloudNotesMediator",
                "CloudNotesServer",
                "CloudNotesStore",
                "CloudNotesSync",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            linkerSettings: [
                // Relative relocations packed (DT_RELR, glibc 2.36+; lld has the option, gold does not):
                // the dynamic loader reads ~30 KB at start-up instead of a 3 MB table that otherwise stays
                // in the server's resident memory (measured by bench/run's peak RSS).
                .unsafeFlags(["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs"], .when(platforms: [.linux], configuration: .release)),
            ]
        ),
        // The message-path fuzzer (libFuzzer with -DFUZZING; otherwise it replays corpus files).
        .executableTarget(
            name: "CloudNotesFuzz",
            dependencies: [
                "CloudNotesServer",
                "CloudNotesTransport",
                "CloudNotesStore",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(name: "CloudNotesProtocolTests", dependencies: ["CloudNotesProtocol"]),
        .testTarget(name: "CloudNotesJSONTests", dependencies: ["CloudNotesJSON", "CloudNotesTestSupport"]),
        .testTarget(name: "CloudNotesTransportTests", dependencies: ["CloudNotesTransport", "CloudNotesJSON", "CloudNotesTestSupport"]),
        // What several test targets share (a seeded random generator, temporary stores, waiting helpers).
        .target(name: "CloudNotesTestSupport", path: "Tests/CloudNotesTestSupport"),
        .testTarget(name: "CloudNotesStoreTests", dependencies: ["CloudNotesStore", "CSQLiteLogWrites", "CloudNotesTestSupport"]),
        .testTarget(
            name: "CloudNotesSyncTests",
            dependencies: [
                "CloudNotesSync", "CloudNotesStore", "CloudNotesTestSupport",
                // To read a query's plan.
                .product(name: "GRDB", package: "GRDB.swift"),
            ]),
        .testTarget(
            name: "CloudNotesMediatorTests",
            dependencies: [
                "CloudNotesMediator", "CloudNotesStore", "CloudNotesProtocol", "CloudNotesTestSupport",
                // To make the store fail on purpose (a temporary trigger).
                .product(name: "GRDB", package: "GRDB.swift"),
            ]),
        .testTarget(
            name: "CloudNotesServerTests",
            dependencies: [
                "CloudNotesServer", "CloudNotesStore", "CloudNotesProtocol", "CloudNotesTransport", "CloudNotesTestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
