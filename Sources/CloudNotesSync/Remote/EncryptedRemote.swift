import Crypto
import Foundation

// MARK: - Encrypted remotes

/// A remote whose files are sealed with the remote's data key (`SealedFile`): sync reads and writes
/// plain bytes through it, and the storage under it sees only sealed ones, under the same paths.
///
/// The marker stays plain, since a device must read it to learn that the remote is encrypted.
struct EncryptedRemote: Remote {
    let base: any Remote
    /// The data key's bytes (`SymmetricKey` is not `Sendable`).
    let keyBytes: Data

    init(base: any Remote, key: SymmetricKey) {
        self.base = base
        keyBytes = key.withUnsafeBytes { Data($0) }
    }

    private var key: SymmetricKey { SymmetricKey(data: keyBytes) }

    var displayURL: String { base.displayURL }
    var requestCount: Int { base.requestCount }

    func read(_ path: String) async throws -> Data? {
        guard let sealed = try await base.read(path) else { return nil }
        guard path != RemoteLayout.markerPath else { return sealed }
        guard let plain = SealedFile.open(sealed, path: path, key: key) else {
            throw SyncError.corruptRemote("\(path) fails its authentication: it was changed, cut short or moved there")
        }
        return plain
    }

    func write(_ path: String, _ data: Data) async throws {
        try await base.write(path, path == RemoteLayout.markerPath ? data : try SealedFile.seal(data, path: path, key: key))
    }

    func write(_ path: String, _ data: Data, if condition: WriteCondition) async throws {
        try await base.write(path, path == RemoteLayout.markerPath ? data : try SealedFile.seal(data, path: path, key: key),
                             if: condition)
    }

    func makeFolder(_ path: String) async throws { try await base.makeFolder(path) }
    func list(_ path: String) async throws -> [String] { try await base.list(path) }
    func removeFolder(_ path: String) async throws { try await base.removeFolder(path) }
    func removeFile(_ path: String) async throws { try await base.removeFile(path) }
}
