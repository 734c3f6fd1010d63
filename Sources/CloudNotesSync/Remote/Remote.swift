import Foundation

// MARK: - Remotes

/// Storage that sync reads and writes files in: a folder or a WebDAV collection. Paths are relative
/// to the remote's root and use `/`.
///
/// Sync needs no locking, no conditional writes and no rename from a remote: each path has one writer
/// (see protocol/sync.md). A device removes only its own files, and those of a device forgotten.
public protocol Remote: Sendable {
    /// The remote's URL as shown to the user (never with credentials).
    var displayURL: String { get }
    /// The file's bytes, or nil when there is no such file.
    func read(_ path: String) async throws -> Data?
    /// Writes the file whole, replacing it, and making the folders above it if missing; a reader sees
    /// the old bytes or the new ones, never a part.
    func write(_ path: String, _ data: Data) async throws
    /// Makes the folder and the folders above it, if missing.
    func makeFolder(_ path: String) async throws
    /// The names in the folder; empty when there is no such folder.
    func list(_ path: String) async throws -> [String]
    /// Removes the folder with everything in it; nothing when there is no such folder.
    func removeFolder(_ path: String) async throws
    /// Removes the file; nothing when there is no such file.
    func removeFile(_ path: String) async throws
    /// How many requests this remote has made (for the cost of a sync).
    var requestCount: Int { get }
    /// Writes the file as `write` does if `condition` holds, where the remote can tell (S3's conditional
    /// writes); a remote that cannot tell writes it all the same. Throws `RemoteWriteConflict` when the
    /// condition does not hold, and then writes nothing.
    func write(_ path: String, _ data: Data, if condition: WriteCondition) async throws
}

extension Remote {
    /// Folders and WebDAV: no condition can be told, so none is (see protocol/sync.md, "Principles").
    public func write(_ path: String, _ data: Data, if condition: WriteCondition) async throws {
        try await write(path, data)
    }
}

/// What must hold for a conditional write.
public enum WriteCondition: Sendable {
    /// No file is at the path.
    case absent
    /// The file is as this remote last read or wrote it during this sync (still absent, if it found none).
    case unchanged
}

/// A conditional write whose condition did not hold: another writer changed the file first.
public struct RemoteWriteConflict: Error, Sendable {
    public let path: String
}

// MARK: - Opening one

/// Opens the remote `url` names: `file:///path`, `http(s)://…` or `s3://bucket/prefix`.
///
/// A WebDAV or S3 request gives up after `CLOUDNOTES_REMOTE_TIMEOUT` seconds (default 30).
public func openRemote(_ url: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> any Remote {
    let remoteURL = try RemoteURL(url)
    switch remoteURL.kind {
    case .folder(let path):
        return try FolderRemote(path: path)
    case .webDAV(let base):
        return WebDAVRemote(base: base, credentials: Credentials.find(for: base, environment: environment),
                            timeout: requestTimeout(environment))
    case .s3(let bucket, let prefix):
        return S3Remote(settings: try S3Settings(bucket: bucket, prefix: prefix, environment: environment),
                        timeout: requestTimeout(environment))
    }
}

/// How long a request to a remote over HTTP may take: `CLOUDNOTES_REMOTE_TIMEOUT` seconds, else 30.
private func requestTimeout(_ environment: [String: String]) -> Duration {
    let configured = environment["CLOUDNOTES_REMOTE_TIMEOUT"].flatMap(Double.init)
    let seconds = configured.map { $0 > 0 && $0.isFinite ? $0 : 30 } ?? 30
    return .milliseconds(Int64(seconds * 1000))
}

/// A remote URL, checked: one of the schemes sync speaks, and no credentials in it.
public struct RemoteURL: Sendable, Hashable {
    /// Where the remote is: a local folder (a path), or a WebDAV collection.
    public enum Kind: Sendable, Hashable {
        case folder(String)
        /// The collection's URL, ending in `/`.
        case webDAV(URL)
        /// A bucket, and the key prefix the remote's files are under (no slash at its ends; may be empty).
        case s3(bucket: String, prefix: String)
    }

    public let kind: Kind
    /// The URL as the store records it.
    public let normalized: String

    public init(_ text: String) throws {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased() else {
            throw SyncError.badRemote("the remote must be a URL: file:///path/to/folder, http://, https:// or s3://bucket/prefix")
        }
        // Refused before anything else, and never repeated back: the text holds a password.
        if components.user != nil || components.password != nil {
            throw SyncError.badRemote(
                "put no credentials in the remote URL; set CLOUDNOTES_REMOTE_USER and CLOUDNOTES_REMOTE_PASSWORD, or use a netrc file")
        }
        switch scheme {
        case "file":
            guard components.host?.isEmpty ?? true, !components.path.isEmpty, components.path.hasPrefix("/") else {
                throw SyncError.badRemote("a folder remote is file:///absolute/path")
            }
            let path = components.path.count > 1 && components.path.hasSuffix("/") ? String(components.path.dropLast()) : components.path
            kind = .folder(path)
            normalized = "file://" + path
        case "http", "https":
            guard let host = components.host, !host.isEmpty, components.query == nil, components.fragment == nil else {
                throw SyncError.badRemote("a WebDAV remote is http(s)://host/path/, with no query or fragment")
            }
            var collection = components
            collection.scheme = scheme
            if !collection.path.hasSuffix("/") { collection.path += "/" }
            guard let url = collection.url else { throw SyncError.badRemote("the remote is not a valid URL") }
            kind = .webDAV(url)
            normalized = url.absoluteString
        case "s3":
            let bucket = components.host ?? ""
            guard bucket.utf8.count >= 3, bucket.utf8.count <= 63, components.query == nil, components.fragment == nil,
                  bucket.utf8.allSatisfy({ (0x61...0x7a).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2d || $0 == 0x2e })
            else {
                throw SyncError.badRemote("an S3 remote is s3://bucket/prefix: a bucket of 3 to 63 lowercase letters, digits, dots and hyphens")
            }
            let prefix = components.path.split(separator: "/").joined(separator: "/")
            kind = .s3(bucket: bucket, prefix: prefix)
            normalized = "s3://\(bucket)" + (prefix.isEmpty ? "" : "/\(prefix)")
        default:
            throw SyncError.badRemote("remotes are file:// folders, http(s):// WebDAV collections or s3:// buckets, not \(scheme):")
        }
    }
}
