import Foundation
import Synchronization

// MARK: - Folder remote

/// A remote in a local folder: a Dropbox, Syncthing or network folder, or a plain one for tests.
///
/// The folder must exist: an unmounted network folder or a typo must not become a new, empty remote.
/// Files are written to a temporary name beside them and renamed, so a reader (or a syncing client)
/// never sees half a file.
public final class FolderRemote: Remote {
    public let root: String
    private let requests = Atomic<Int>(0)

    public init(path: String) throws {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue else {
            throw SyncError.unreachable("the remote folder \(path) does not exist (is it mounted?); create it first")
        }
        root = path
    }

    public var displayURL: String { "file://" + root }
    public var requestCount: Int { requests.load(ordering: .relaxed) }

    public func read(_ path: String) async throws -> Data? {
        counted()
        do {
            return try Data(contentsOf: URL(fileURLWithPath: full(path)))
        } catch let error as CocoaError where error.code == .fileReadNoSuchFile {
            return nil
        } catch {
            throw SyncError.unreachable("cannot read \(full(path)): \(error.localizedDescription)")
        }
    }

    public func write(_ path: String, _ data: Data) async throws {
        counted()
        let target = full(path)
        let folder = (target as NSString).deletingLastPathComponent
        // One temporary name per file: each file has one writer, and its syncs take turns, so a
        // temporary file left by a killed sync is reused, and renamed away, by the next.
        let temporary = "\(folder)/.\((target as NSString).lastPathComponent).tmp"
        var fd = open(temporary, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0o644)
        if fd < 0, errno == ENOENT {  // a new device's folder: made on its first write
            try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            fd = open(temporary, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0o644)
        }
        guard fd >= 0 else { throw failure("cannot write \(target)") }
        var ok = data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Foundation.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 { if errno == EINTR { continue } else { return false } }
                offset += written
            }
            return true
        }
        ok = ok && fsync(fd) == 0
        close(fd)
        guard ok, rename(temporary, target) == 0 else {
            let error = failure("cannot write \(target)")
            unlink(temporary)
            throw error
        }
    }

    public func makeFolder(_ path: String) async throws {
        counted()
        do {
            try FileManager.default.createDirectory(atPath: full(path), withIntermediateDirectories: true)
        } catch {
            throw SyncError.unreachable("cannot make the folder \(full(path)): \(error.localizedDescription)")
        }
    }

    public func removeFile(_ path: String) async throws {
        counted()
        guard unlink(full(path)) == 0 || errno == ENOENT else { throw failure("cannot remove \(full(path))") }
    }

    public func removeFolder(_ path: String) async throws {
        counted()
        guard FileManager.default.fileExists(atPath: full(path)) else { return }
        do {
            try FileManager.default.removeItem(atPath: full(path))
        } catch {
            throw SyncError.unreachable("cannot remove \(full(path)): \(error.localizedDescription)")
        }
    }

    public func list(_ path: String) async throws -> [String] {
        counted()
        guard FileManager.default.fileExists(atPath: full(path)) else { return [] }
        do {
            return try FileManager.default.contentsOfDirectory(atPath: full(path))
        } catch {
            throw SyncError.unreachable("cannot list \(full(path)): \(error.localizedDescription)")
        }
    }

    private func full(_ path: String) -> String { root + "/" + path }
    private func counted() { requests.add(1, ordering: .relaxed) }
    private func failure(_ what: String) -> SyncError { .unreachable("\(what): \(String(cString: strerror(errno)))") }
}
