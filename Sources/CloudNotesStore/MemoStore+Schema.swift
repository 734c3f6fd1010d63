import GRDB

// MARK: - Schema migrations

extension MemoStore {
    /// The store's identity in the SQLite header (`PRAGMA application_id`): "CNot".
    static let applicationID: Int32 = 0x434E_6F74

    /// The schema, one migration per released version. A shipped migration never changes.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: "PRAGMA application_id = \(applicationID)")
            try db.create(table: "memo") { t in
                t.autoIncrementedPrimaryKey("localID")
                t.column("id", .text).notNull().unique()
                t.column("text", .blob).notNull()  // UTF-8 bytes, exactly as written
                t.column("title", .text).notNull()
                t.column("preview", .text).notNull()
                t.column("createdAt", .integer).notNull()
                t.column("modifiedAt", .integer).notNull()
                t.column("version", .integer).notNull()
                t.column("seq", .integer).notNull().unique()
                t.column("deleted", .boolean).notNull().defaults(to: false)
                // Set while an import is still adding its memos; they stay hidden until it is done.
                t.column("importBatch", .text)
                // Whether `text` is in the full-text index. Long texts and imports are indexed later,
                // in the background; until then a search reads their text directly (see SearchFilter).
                t.column("indexed", .boolean).notNull().defaults(to: false)
            }
            try db.execute(sql: """
                CREATE INDEX memo_order ON memo(modifiedAt DESC, seq DESC) WHERE deleted = 0 AND importBatch IS NULL;
                CREATE INDEX memo_import ON memo(importBatch) WHERE importBatch IS NOT NULL;
                CREATE INDEX memo_unindexed ON memo(localID) WHERE indexed = 0 AND deleted = 0;
                CREATE VIEW indexed_memo AS SELECT localID, text FROM memo WHERE indexed = 1;
                CREATE VIRTUAL TABLE memo_fts USING fts5(
                    text, content='indexed_memo', content_rowid='localID', tokenize='trigram');
                """)
            // The index holds exactly the rows marked `indexed`, kept so inside every write transaction:
            // a search never sees a stale state, not even after a crash.
            try db.execute(sql: """
                CREATE TRIGGER memo_fts_insert AFTER INSERT ON memo WHEN new.indexed BEGIN
                    INSERT INTO memo_fts(rowid, text) VALUES (new.localID, new.text);
                END;
                CREATE TRIGGER memo_fts_delete AFTER DELETE ON memo WHEN old.indexed BEGIN
                    INSERT INTO memo_fts(memo_fts, rowid, text) VALUES ('delete', old.localID, old.text);
                END;
                CREATE TRIGGER memo_fts_update AFTER UPDATE OF text, indexed ON memo BEGIN
                    INSERT INTO memo_fts(memo_fts, rowid, text)
                        SELECT 'delete', old.localID, old.text WHERE old.indexed;
                    INSERT INTO memo_fts(rowid, text)
                        SELECT new.localID, new.text WHERE new.indexed;
                END;
                """)
        }
        migrator.registerMigration("v2-visible-changes") { db in
            // Counts the changes a front end can see (create, update, delete, an import shown), so that
            // other processes tell them from commits that change nothing visible: an index chunk, an
            // import's hidden chunk, a checkpoint. SQLite's data_version moves with all of them.
            try db.execute(sql: """
                CREATE TABLE visibleChanges (count INTEGER NOT NULL);
                INSERT INTO visibleChanges (count) VALUES (0);
                """)
        }
        migrator.registerMigration("v3-sync") { db in
            // Sync's state (see protocol/sync.md): the revision history, each memo's head in it, what
            // this device published and read. `packedSeq` starts at 0, so every memo made before sync
            // existed gets its first revision at the first sync.
            try db.execute(sql: """
                CREATE TABLE syncState (
                    singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
                    device TEXT NOT NULL,
                    remote TEXT,
                    published INTEGER NOT NULL DEFAULT 0,
                    publishedHash TEXT NOT NULL DEFAULT '',
                    packedSeq INTEGER NOT NULL DEFAULT 0,
                    lastSyncAt INTEGER,
                    lastError TEXT);
                INSERT INTO syncState (singleton, device) VALUES (1, lower(hex(randomblob(16))));
                CREATE TABLE revision (
                    localID INTEGER PRIMARY KEY,
                    id TEXT NOT NULL UNIQUE,
                    memo TEXT NOT NULL,
                    parents TEXT NOT NULL,
                    deleted BOOLEAN NOT NULL,
                    text BLOB,
                    createdAt INTEGER NOT NULL,
                    modifiedAt INTEGER NOT NULL,
                    segment INTEGER);
                CREATE INDEX revision_memo ON revision(memo);
                CREATE INDEX revision_unpublished ON revision(localID) WHERE segment IS NULL;
                CREATE INDEX revision_segment ON revision(segment) WHERE segment > 0;
                CREATE TABLE memoHead (
                    memo TEXT PRIMARY KEY, revision TEXT NOT NULL, seq INTEGER NOT NULL) WITHOUT ROWID;
                CREATE TABLE remoteDevice (
                    device TEXT PRIMARY KEY, applied INTEGER NOT NULL, lastHash TEXT NOT NULL) WITHOUT ROWID;
                CREATE TABLE waitingMemo (memo TEXT PRIMARY KEY) WITHOUT ROWID;
                CREATE TABLE syncConflict (copy TEXT PRIMARY KEY, memo TEXT NOT NULL, at INTEGER NOT NULL) WITHOUT ROWID;
                """)
        }
        migrator.registerMigration("v4-short-term-index") { db in
            // Searches of one or two characters go through the index too (`SearchFilter.indexPrefix`):
            // each of their occurrences begins a trigram, found by prefix in the index's vocabulary. An
            // occurrence at the very end of a text begins none, so the index now holds each text followed
            // by two U+FDD0 (`SearchFilter.indexSentinel`, a noncharacter). The old entries lack them: the
            // index starts empty, and the background indexer fills it again a chunk at a time, while
            // searches read the text of the memos it has not reached. The triggers go first, so that
            // marking every memo unindexed does no index work.
            try db.execute(sql: """
                DROP TRIGGER memo_fts_insert;
                DROP TRIGGER memo_fts_delete;
                DROP TRIGGER memo_fts_update;
                INSERT INTO memo_fts(memo_fts) VALUES ('delete-all');
                """)
            // A range of local ids at a time: an in-memory statement journal holds every page its
            // statement changes.
            let last = try Int64.fetchOne(db, sql: "SELECT max(localID) FROM memo") ?? 0
            for first in stride(from: 0, through: last, by: 1000) {
                try db.execute(
                    sql: "UPDATE memo SET indexed = 0 WHERE localID BETWEEN ? AND ? AND indexed",
                    arguments: [first, first + 999])
            }
            try db.execute(sql: """
                DROP VIEW indexed_memo;
                CREATE VIEW indexed_memo AS SELECT localID, text || char(64976, 64976) AS text FROM memo WHERE indexed = 1;
                CREATE VIRTUAL TABLE memo_fts_terms USING fts5vocab(memo_fts, 'row');
                CREATE TRIGGER memo_fts_insert AFTER INSERT ON memo WHEN new.indexed BEGIN
                    INSERT INTO memo_fts(rowid, text) VALUES (new.localID, new.text || char(64976, 64976));
                END;
                CREATE TRIGGER memo_fts_delete AFTER DELETE ON memo WHEN old.indexed BEGIN
                    INSERT INTO memo_fts(memo_fts, rowid, text) VALUES ('delete', old.localID, old.text || char(64976, 64976));
                END;
                CREATE TRIGGER memo_fts_update AFTER UPDATE OF text, indexed ON memo BEGIN
                    INSERT INTO memo_fts(memo_fts, rowid, text)
                        SELECT 'delete', old.localID, old.text || char(64976, 64976) WHERE old.indexed;
                    INSERT INTO memo_fts(rowid, text)
                        SELECT new.localID, new.text || char(64976, 64976) WHERE new.indexed;
                END;
                """)
        }
        migrator.registerMigration("v5-import-ranges") { db in
            // An import's memos were marked with its name (`importBatch`, a text) until it finished.
            // Showing them set it to NULL, which shrank every record, and SQLite wrote each one again
            // whole, its text included. They are now marked with an empty BLOB, which takes no more room
            // in a record than NULL does (an integer would become text in this TEXT column), so that
            // showing them rewrites only the pages that change; an import's memos are found by the
            // ranges of local ids its chunks took (a chunk's rows, inserted in one transaction, take
            // consecutive ids). Memos marked by name, by an older version's import, stay as they are:
            // that import shows them by name, or, if its process died, they are removed by name.
            try db.execute(sql: """
                CREATE TABLE importChunk (
                    batch TEXT NOT NULL, firstLocalID INTEGER NOT NULL, lastLocalID INTEGER NOT NULL);
                CREATE INDEX importChunk_batch ON importChunk(batch);
                """)
        }
        migrator.registerMigration("v6-named-import-marks") { db in
            // Every memo an import adds is marked (an empty BLOB) until it is shown, and `memo_import`
            // held an entry for each: about a tenth of an import's time went to adding 100,000 entries
            // to it and removing them again, for an index that nothing reads since imports are found by
            // their ranges. Only the names that older versions' imports wrote are still looked up
            // (`MemoStore.namedImportMark`); the index now holds those alone. Building it reads the
            // table once, at the first open by this version.
            try db.execute(sql: """
                DROP INDEX memo_import;
                CREATE INDEX memo_import_named ON memo(importBatch) WHERE typeof(importBatch) = 'text';
                """)
        }
        migrator.registerMigration("v7-named-import-marks-by-comparison") { db in
            // A function in a partial index's condition (`typeof`, above) may fail, so SQLite gave every
            // statement that writes several memos a statement journal, to take the statement back: a
            // copy of each page it changed (every leaf page of the table when an import is shown) and a
            // savepoint for each 20-memo INSERT of an import. A comparison cannot fail. In SQLite's
            // order, a text is below every BLOB and NULL compares as nothing: the condition holds for the
            // names (texts) and not for the marks (empty BLOBs) or NULL, as `typeof` did.
            try db.execute(sql: """
                DROP INDEX memo_import_named;
                CREATE INDEX memo_import_names ON memo(importBatch) WHERE importBatch < X'';
                """)
        }
        migrator.registerMigration("v8-outgoing-revisions") { db in
            // Which revisions this device publishes, and in which segment, moves out of `revision` into a
            // table of its own. Recording a segment set `revision.segment` from NULL to a number, which
            // makes the record longer, and SQLite then wrote each record again whole, its text included:
            // publishing a first sync wrote every memo's text twice more. A row of `outgoingRevision` is
            // two integers. `revision.segment` is no longer read or written: dropping it would rewrite
            // every revision now, the cost this migration removes.
            try db.execute(sql: """
                CREATE TABLE outgoingRevision (revision INTEGER PRIMARY KEY, segment INTEGER);
                INSERT INTO outgoingRevision (revision, segment)
                    SELECT localID, segment FROM revision WHERE segment IS NULL OR segment > 0;
                CREATE INDEX outgoingRevision_segment ON outgoingRevision(segment);
                DROP INDEX revision_unpublished;
                DROP INDEX revision_segment;
                """)
        }
        migrator.registerMigration("v9-versions-and-trash") { db in
            // Versions and the trash (protocol/README.md, "Versions and the trash"). `author` says who wrote
            // a memo's current text, so that the change that replaces it can tell whether to keep it as a
            // version; NULL (memos written before this version) counts as anyone else. `trashedAt` is set
            // while a deleted memo's text can still be brought back. Both columns are added at the end,
            // which rewrites no row. Revisions note the device that made them, for the versions they become.
            try db.execute(sql: """
                ALTER TABLE memo ADD COLUMN author TEXT;
                ALTER TABLE memo ADD COLUMN trashedAt INTEGER;
                CREATE INDEX memo_trash ON memo(trashedAt) WHERE trashedAt IS NOT NULL;
                CREATE TABLE memoVersion (
                    localID INTEGER PRIMARY KEY,
                    memo INTEGER NOT NULL,
                    number INTEGER NOT NULL,
                    savedAt INTEGER NOT NULL,
                    author TEXT,
                    title TEXT NOT NULL,
                    text BLOB NOT NULL,
                    UNIQUE (memo, number));
                ALTER TABLE revision ADD COLUMN device TEXT;
                """)
            // Memos deleted before the trash existed still hold their text: the recent ones go to the
            // trash, dated by their deletion, and the next purge takes the old ones.
            try db.execute(sql: """
                UPDATE memo SET trashedAt = modifiedAt
                WHERE deleted AND length(text) > 0 AND trim(CAST(text AS TEXT), ' ' || char(9, 10, 13)) <> ''
                """)
        }
        migrator.registerMigration("v10-index-hash-size") { db in
            // FTS5 keeps a transaction's new index entries in memory until they pass `hashsize` (FTS5's
            // default is smaller than a grown chunk's), then writes them as a segment and merges segments
            // there, inside the statement under way, whose journal SQLite keeps in memory (`temp_store`)
            // with every page the merge changes. With this size a grown chunk of the background indexer
            // (`BackgroundIndexer.chunkBytes`) keeps its entries in memory until the commit, which writes
            // them as one segment.
            try db.execute(sql: "INSERT INTO memo_fts(memo_fts, rank) VALUES ('hashsize', 8388608)")
        }
        migrator.registerMigration("v11-sync-format-2") { db in
            // Sync format 2 (protocol/sync.md): history that every device has taken in is pruned, here and
            // on the remote. Each revision stores its generation, so that a device without a revision's
            // whole history still orders merge bases as the others do (older ones get it from their
            // memo's history when first published again), and `cut` when its line said that parents of
            // it were pruned. A revision read from another device notes the segment it came in, in the
            // column `segment` (unused since v8; NULL in those rows). `syncHorizon` holds, per device, how
            // many of its segments the other devices have taken in (`segments`), and how far this store
            // has pruned the history they hold (`pruned`). `syncState.snapshot` is this device's latest
            // snapshot on the remote, as its head names it (JSON), and `prunedSinceSnapshot` the bytes of
            // text pruned from its own segments since.
            try db.execute(sql: """
                ALTER TABLE revision ADD COLUMN generation INTEGER;
                ALTER TABLE revision ADD COLUMN cut BOOLEAN NOT NULL DEFAULT 0;
                CREATE INDEX revision_source ON revision(device, segment) WHERE device IS NOT NULL;
                CREATE TABLE syncHorizon (
                    device TEXT PRIMARY KEY, segments INTEGER NOT NULL DEFAULT 0, pruned INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID;
                ALTER TABLE syncState ADD COLUMN snapshot TEXT;
                ALTER TABLE syncState ADD COLUMN prunedSinceSnapshot INTEGER NOT NULL DEFAULT 0;
                """)
        }
        migrator.registerMigration("v12-sync-encryption") { db in
            // An encrypted remote (protocol/sync.md, "Encryption"): `encrypt` says the remote was set to be
            // made encrypted, and `syncKey` holds its data key once this device opened it with the
            // passphrase, so that later syncs need none. The passphrase itself is never stored.
            try db.execute(sql: """
                ALTER TABLE syncState ADD COLUMN encrypt BOOLEAN NOT NULL DEFAULT 0;
                ALTER TABLE syncState ADD COLUMN syncKey BLOB;
                """)
        }
        return migrator
    }
}
