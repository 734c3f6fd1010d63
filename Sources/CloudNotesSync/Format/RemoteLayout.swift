import CloudNotesStore
import Foundation

// MARK: - Remote layout (format 2)

/// Where things are on a remote, and how heads and segments are written: protocol/sync.md.
///
/// Format 2 is format 1 with more in each head (what the device has taken in of the others, the devices
/// forgotten) and each revision's generation; it reads format 1 files as they are.
enum RemoteLayout {
    static let format = 2
    /// The formats this version reads.
    static let readableFormats = 1...2
    static let markerPath = "cloudnotes-sync.json"
    static let devicesPath = "devices"

    static func devicePath(_ device: String) -> String { "\(devicesPath)/\(device)" }
    static func headPath(_ device: String) -> String { "\(devicePath(device))/head.json" }
    static func segmentsPath(_ device: String) -> String { "\(devicePath(device))/segments" }
    static func segmentPath(_ device: String, _ number: Int64) -> String {
        "\(segmentsPath(device))/\(twelveDigits(number)).jsonl"
    }
    static func snapshotsPath(_ device: String) -> String { "\(devicePath(device))/snapshots" }
    /// The folder of the snapshot that stands for segments 1...`covers`.
    static func snapshotPath(_ device: String, covers: Int64) -> String { "\(snapshotsPath(device))/\(twelveDigits(covers))" }
    static func snapshotPartPath(_ device: String, covers: Int64, part: Int64) -> String {
        "\(snapshotPath(device, covers: covers))/\(twelveDigits(part)).jsonl"
    }

    /// The segment number a file name under `segments/` says, if it is one.
    static func segmentNumber(ofFile name: String) -> Int64? {
        guard name.hasSuffix(".jsonl"), name.utf8.count == 18 else { return nil }
        return Int64(name.prefix(12))
    }

    private static func twelveDigits(_ number: Int64) -> String {
        let digits = String(number)
        return String(repeating: "0", count: max(0, 12 - digits.count)) + digits
    }

    /// Whether a name under `devices/` is a device id (32 lowercase hex digits).
    static func isDeviceID(_ name: String) -> Bool {
        name.utf8.count == 32 && name.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        // Sorted keys: a segment recorded once must be written byte for byte the same on every retry.
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
}

// MARK: - Marker

/// The file that says a folder or collection is a CloudNotes remote, and in which format; for an
/// encrypted remote, also its wrapped key.
///
/// An encrypted remote's marker says version 3 (format 2, sealed), so that versions that cannot read
/// it stop and say to upgrade rather than write plain text beside it.
struct RemoteMarker: Codable, Equatable {
    var format: String
    var version: Int
    var encryption: RemoteEncryption?

    static let formatName = "cloudnotes-sync"
    static let encryptedVersion = 3
    static let current = RemoteMarker(format: formatName, version: RemoteLayout.format)

    static func encrypted(_ encryption: RemoteEncryption) -> RemoteMarker {
        RemoteMarker(format: formatName, version: encryptedVersion, encryption: encryption)
    }

    func encoded() throws -> Data { try RemoteLayout.encoder.encode(self) + Data("\n".utf8) }
}

// MARK: - Head

/// A device's head: how many segments it has published, and the hash of the last one; in format 2
/// also how far it has taken in every other device's segments, and the devices forgotten on the remote.
struct DeviceHead: Codable, Equatable {
    var format: Int
    var device: String
    var segments: Int64
    var last: String
    /// For each other device, how many of its segments this device has read and taken in: every memo
    /// here descends from every revision in them. Nil in format 1 (nothing is known to be taken in).
    var seen: [String: Int64]?
    /// Devices forgotten on this remote (`cloudnotes sync --forget-device`), as this device knows them.
    var forgotten: [String]?
    /// Format 2: the snapshot that stands for this device's first segments, once they are removed.
    var snapshot: SnapshotRef?

    init(device: String, segments: Int64, last: String, seen: [String: Int64] = [:], forgotten: Set<String> = [],
         snapshot: SnapshotRef? = nil) {
        self.format = RemoteLayout.format
        self.device = device
        self.segments = segments
        self.last = last
        self.seen = seen
        self.forgotten = forgotten.sorted()
        self.snapshot = snapshot
    }

    func encoded() throws -> Data { try RemoteLayout.encoder.encode(self) + Data("\n".utf8) }

    static func decode(_ data: Data, device: String) throws -> DeviceHead {
        guard let head = try? JSONDecoder().decode(DeviceHead.self, from: data), head.device == device,
              RemoteLayout.readableFormats.contains(head.format), head.segments >= 0,
              head.seen?.allSatisfy({ RemoteLayout.isDeviceID($0.key) && $0.value >= 0 }) ?? true,
              head.forgotten?.allSatisfy(RemoteLayout.isDeviceID) ?? true,
              head.snapshot.map({ $0.covers >= 1 && $0.covers <= head.segments && $0.parts >= 1 }) ?? true
        else { throw SyncError.corruptRemote("the head of device \(device) is unreadable or of an unknown format") }
        return head
    }
}

/// A device's snapshot, as its head names it: revisions that stand for its segments 1...`covers`,
/// in `parts` files chained as segments are (protocol/sync.md, "Compaction").
struct SnapshotRef: Codable, Equatable {
    var covers: Int64
    var parts: Int64
    /// The SHA-256 of the last part.
    var last: String
    /// The SHA-256 of segment `covers`, which segment `covers + 1` names as its `previous`.
    var segment: String
}

// MARK: - Segments

/// The first line of a segment, or of a snapshot's part (which says the segments it stands for).
struct SegmentHeader: Codable, Equatable {
    var format: Int
    var device: String
    var number: Int64
    var previous: String
    var revisions: Int
    var snapshot: Int64?
}

/// One revision, as a line of a segment.
struct RevisionLine: Codable, Equatable {
    var id: String
    var memo: String
    var parents: [String]
    var deleted: Bool
    var text: String?
    var createdAt: Int64
    var modifiedAt: Int64
    /// Format 2: the length of the longest history from a root to this revision (a root's is 1).
    var generation: Int64?
    /// Format 2: present (true) when some of its parents were pruned from the remote.
    var cut: Bool?

    init(_ revision: Revision) {
        id = revision.id
        memo = revision.memo
        parents = revision.parents
        deleted = revision.content.deleted
        text = revision.content.text
        createdAt = revision.content.createdAt
        modifiedAt = revision.content.modifiedAt
        generation = revision.generation
        cut = revision.cut ? true : nil
    }

    var revision: Revision {
        Revision(id: id, memo: memo, parents: parents,
                 content: RevisionContent(text: deleted ? nil : (text ?? ""), createdAt: createdAt, modifiedAt: modifiedAt),
                 generation: generation, cut: cut ?? false)
    }
}

/// A segment read back and checked: what its header says came before it, and its revisions.
struct DecodedSegment {
    var previous: String
    var hash: String
    var revisions: [Revision]
}

/// A segment's bytes on the remote: a header line, then one line per revision.
enum SegmentFile {
    /// The bytes of segment `segment.number` of `device` (or of that part of the snapshot that stands
    /// for segments 1...`snapshot`), following the one whose hash is `previous`.
    static func encode(_ segment: OutgoingSegment, device: String, previous: String, snapshot: Int64? = nil) throws -> Data {
        let header = SegmentHeader(format: RemoteLayout.format, device: device, number: segment.number,
                                   previous: previous, revisions: segment.revisions.count, snapshot: snapshot)
        var data = try RemoteLayout.encoder.encode(header) + Data("\n".utf8)
        for revision in segment.revisions {
            data += try RemoteLayout.encoder.encode(RevisionLine(revision)) + Data("\n".utf8)
        }
        return data
    }

    /// Reads segment `number` of `device`, refusing one that is cut short, of another device or number,
    /// or holding a revision whose id does not match its content.
    static func decode(_ data: Data, device: String, number: Int64, rules: SyncRules, snapshot: Int64? = nil) throws -> DecodedSegment {
        func corrupt(_ why: String) -> SyncError {
            .corruptRemote("\(snapshot.map { "part \(number) of the snapshot \($0)" } ?? "segment \(number)") of device \(device) \(why)")
        }
        guard data.last == UInt8(ascii: "\n") else { throw corrupt("is cut short") }
        let lines = Self.lines(of: data.dropLast())
        let decoder = JSONDecoder()
        guard let first = lines.first, let header = try? decoder.decode(SegmentHeader.self, from: first),
              RemoteLayout.readableFormats.contains(header.format)
        else { throw corrupt("has no readable header") }
        guard header.device == device, header.number == number, header.snapshot == snapshot else {
            throw corrupt("is not what its name says")
        }
        guard header.revisions == lines.count - 1 else { throw corrupt("is cut short") }
        var revisions: [Revision] = []
        revisions.reserveCapacity(header.revisions)
        for line in lines.dropFirst() {
            guard let revision = try? decoder.decode(RevisionLine.self, from: line).revision,
                  MemoIDFormat.isMemoID(revision.memo), revision.parents.count <= 2,
                  revision.generation.map({ $0 >= 1 }) ?? true,
                  rules.revisionID(memo: revision.memo, parents: revision.parents, content: revision.content) == revision.id
            else { throw corrupt("holds a revision that does not match its id") }
            revisions.append(revision)
        }
        return DecodedSegment(previous: header.previous, hash: SyncRules.sha256(data), revisions: revisions)
    }

    /// The lines of `data` without their newlines, empty ones included: what `split(separator:
    /// omittingEmptySubsequences: false)` returns, found with `memchr`. (The generic `split` steps
    /// through `Data` a byte at a time: 11% of the CPU time of a first pull of 100,000 memos.)
    static func lines(of data: Data) -> [Data] {
        data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> [Data] in
            guard let base = bytes.baseAddress else { return [Data()] }
            var lines: [Data] = []
            var start = 0
            while let newline = memchr(base + start, Int32(UInt8(ascii: "\n")), bytes.count - start) {
                let end = base.distance(to: UnsafeRawPointer(newline))
                lines.append(Data(bytes: base + start, count: end - start))
                start = end + 1
            }
            lines.append(Data(bytes: base + start, count: bytes.count - start))
            return lines
        }
    }
}

/// Memo ids as the store keeps them: lowercase UUIDs.
enum MemoIDFormat {
    static func isMemoID(_ id: String) -> Bool {
        let bytes = Array(id.utf8)
        guard bytes.count == 36 else { return false }
        return bytes.enumerated().allSatisfy { index, byte in
            [8, 13, 18, 23].contains(index)
                ? byte == UInt8(ascii: "-")
                : (0x30...0x39).contains(byte) || (0x61...0x66).contains(byte)
        }
    }
}
