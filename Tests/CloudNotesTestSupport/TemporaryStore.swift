import Foundation

// MARK: - Temporary stores

/// A store path in a fresh temporary folder (the store creates the folders on open).
public func temporaryStorePath() -> String {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cloudnotes-tests-\(UUID().uuidString)")
    return folder.appendingPathComponent("sub/notes.sqlite").path
}
