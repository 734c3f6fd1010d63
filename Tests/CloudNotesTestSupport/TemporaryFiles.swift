import Foundation

// MARK: - Temporary files

/// A path named `name` (it may name folders too) in a fresh folder of its own, neither created yet; gone
/// when the test process exits.
public func temporaryPath(_ name: String) -> String {
    processFolder.appendingPathComponent(UUID().uuidString).appendingPathComponent(name).path
}

/// A fresh, empty folder of its own; gone when the test process exits.
public func temporaryFolder() throws -> String {
    let folder = processFolder.appendingPathComponent(UUID().uuidString)
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder.path
}

/// A store path in a fresh temporary folder (the store creates the folders on open).
public func temporaryStorePath() -> String {
    temporaryPath("sub/notes.sqlite")
}

/// Creates the folder `path` is in (and the folders above it), for a file made there by hand.
public func createFolder(of path: String) throws {
    try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
}

/// The folder that holds every path `temporaryPath` and `temporaryFolder` give this process, removed
/// with everything in it when the process exits.
///
/// Removed at exit, not at each test's end: stores, remotes and threads that a test hands its paths to
/// can outlive the test's body. Before, each run of the test suites left about 500 folders and files
/// (590 MB) in the system's temporary folder.
private let processFolder: URL = {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cloudnotes-tests-\(getpid())-\(UUID().uuidString)")
    atexit(removeProcessFolder)
    return folder
}()

private func removeProcessFolder() {
    try? FileManager.default.removeItem(at: processFolder)
}
