import CloudNotesStore
import Foundation

// MARK: - Forgetting a device

extension SyncEngine {
    /// The device `prefix` names, for `sync(forgetting:)`: one on the remote, or one this store has read
    /// (its files may be gone already), never this store's own. Throws `badRemote` saying why otherwise.
    public func deviceToForget(_ prefix: String) async throws -> String {
        let own = try store.syncState().device
        let key = prefix.lowercased()
        guard !key.isEmpty, key.utf8.count <= 32, key.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
            throw SyncError.badRemote("'\(prefix)' is not a device id: devices are 32 hex digits (see cloudnotes sync --status)")
        }
        let known = Set(try await remote.list(RemoteLayout.devicesPath).filter(RemoteLayout.isDeviceID))
            .union(try store.devicesRead())
        let matches = known.filter { $0.hasPrefix(key) }.sorted()
        if own.hasPrefix(key) && matches.allSatisfy({ $0 == own }) {
            throw SyncError.badRemote("\(own) is this device; forget a device from another one")
        }
        let others = matches.filter { $0 != own }
        guard others.count == 1, let device = others.first else {
            throw SyncError.badRemote(others.isEmpty
                ? "no device \(prefix) on \(remote.displayURL) or among the devices this store has read"
                : "\(prefix) names several devices: \(others.joined(separator: ", ")); give more of the id")
        }
        return device
    }

    /// Whether another device's head lists `device` as forgotten.
    func isForgotten(_ device: String) async throws -> Bool {
        for other in try await otherDevices(than: device) {
            if let head = try? await readHead(of: other), head.forgotten?.contains(device) == true { return true }
        }
        return false
    }
}
