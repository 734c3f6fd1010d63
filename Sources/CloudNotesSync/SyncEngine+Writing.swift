import Foundation

// MARK: - Writing this device's files

extension SyncEngine {
    /// Writes segment `number` of this device, where no file may be yet, where the remote can tell (S3).
    ///
    /// A file there already is this device's own, written by a sync cut short before its head named it,
    /// when it holds the same bytes (a segment's bytes are a function of what the store recorded for it);
    /// else another store publishes under this device's id (a copied store file): this store takes a new
    /// id, and the sync stops, for the next one to publish everything under it.
    func writeSegment(_ bytes: Data, number: Int64, device: String) async throws {
        let path = RemoteLayout.segmentPath(device, number)
        do {
            try await remote.write(path, bytes, if: .absent)
        } catch is RemoteWriteConflict {
            guard try await remote.read(path) != bytes else { return }
            try takeNewDeviceID(from: device)
            throw Self.remoteChanged
        }
    }

    /// Writes this device's head, unless another store wrote it since this sync read or wrote it, where
    /// the remote can tell (S3): then the sync stops, and the next one settles it (`settleOwnHead`).
    func writeOwnHead(_ head: DeviceHead) async throws {
        do {
            try await remote.write(RemoteLayout.headPath(head.device), try head.encoded(), if: .unchanged)
        } catch is RemoteWriteConflict {
            throw Self.remoteChanged
        }
    }
}
