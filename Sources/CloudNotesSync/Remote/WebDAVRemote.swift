import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

// MARK: - WebDAV remote

/// A remote in a WebDAV collection (Nextcloud, Apache's mod_dav, nginx, rclone…), through AsyncHTTPClient.
///
/// Uses GET, PUT, MKCOL and PROPFIND (depth 1, only to list the devices): nothing a weak server lacks.
/// Every error names the method, the path and the status, never the credentials.
public final class WebDAVRemote: Remote {
    private let base: URL
    private let authorization: String?
    private let http: HTTPExchange

    public init(base: URL, credentials: Credentials?, timeout: Duration = .seconds(30)) {
        self.base = base
        self.authorization = credentials.map { "Basic " + Data("\($0.user):\($0.password)".utf8).base64EncodedString() }
        http = HTTPExchange(displayURL: base.absoluteString, timeout: timeout)
    }

    public var displayURL: String { base.absoluteString }
    public var requestCount: Int { http.requestCount }

    public func read(_ path: String) async throws -> Data? {
        let (status, body) = try await send(.GET, path)
        switch status.code {
        case 200: return body
        case 404, 410: return nil
        default: throw failure(.GET, path, status)
        }
    }

    public func write(_ path: String, _ data: Data) async throws {
        var (status, _) = try await send(.PUT, path, body: data)
        if status == .conflict || status == .notFound {  // a missing folder above it: make it, then again
            try await makeFolder(Self.parent(of: path))
            (status, _) = try await send(.PUT, path, body: data)
        }
        guard (200...299).contains(status.code) else { throw failure(.PUT, path, status) }
    }

    /// Makes the folder `path` and the folders above it, and the remote's own collection when it is
    /// missing (a first sync to a new URL).
    public func makeFolder(_ path: String) async throws {
        guard !path.isEmpty else { return try await makeCollection() }  // a file at the top had nowhere to go
        var made = ""
        for component in path.split(separator: "/") {
            made += (made.isEmpty ? "" : "/") + component
            var (status, _) = try await send(.MKCOL, made + "/")
            if status == .conflict, !made.contains("/") {
                try await makeCollection()
                (status, _) = try await send(.MKCOL, made + "/")
            }
            guard Self.exists(after: status) else { throw failure(.MKCOL, made, status) }
        }
    }

    /// Makes the remote's own collection, when the one above it exists: MKCOL answers 409 when it does
    /// not (RFC 4918, 9.3.1), and then the user must make it, or fix the URL.
    private func makeCollection() async throws {
        let (status, _) = try await send(.MKCOL, "")
        if Self.exists(after: status) { return }
        guard status == .conflict else { throw failure(.MKCOL, displayURL, status) }
        throw SyncError.unreachable("""
            the WebDAV collection \(displayURL) does not exist, and neither does the one above it: create it \
            (in the server's web interface, for instance), or correct the URL, then sync again
            """)
    }

    /// Whether a folder is there after MKCOL answered `status`: made, or there already (405, or 301
    /// when a server redirects to the slash form).
    private static func exists(after status: HTTPResponseStatus) -> Bool {
        status == .created || status == .methodNotAllowed || status == .movedPermanently
    }

    public func list(_ path: String) async throws -> [String] {
        let query = Data(#"<?xml version="1.0" encoding="utf-8"?><propfind xmlns="DAV:"><prop><resourcetype/></prop></propfind>"#.utf8)
        let (status, body) = try await send(.PROPFIND, path + "/", body: query, headers: [("Depth", "1"), ("Content-Type", "application/xml")])
        switch status.code {
        case 207: return Self.childNames(inMultistatus: body, of: url(path + "/").path)
        case 404: return []
        default: throw failure(.PROPFIND, path, status)
        }
    }

    public func removeFile(_ path: String) async throws {
        let (status, _) = try await send(.DELETE, path)
        guard (200...299).contains(status.code) || status == .notFound else { throw failure(.DELETE, path, status) }
    }

    public func removeFolder(_ path: String) async throws {
        // A collection is removed with its members (RFC 4918, 9.6.1); its URL ends in a slash.
        let (status, _) = try await send(.DELETE, path + "/")
        guard (200...299).contains(status.code) || status == .notFound else { throw failure(.DELETE, path, status) }
    }

    // MARK: Requests

    private func send(_ method: HTTPMethod, _ path: String, body: Data? = nil,
                      headers: [(String, String)] = []) async throws -> (HTTPResponseStatus, Data) {
        let answer = try await http.send(method, url(path), what: "\(method) \(path)",
                                         headers: (authorization.map { [("Authorization", $0)] } ?? []) + headers, body: body)
        if answer.status == .unauthorized || answer.status == .forbidden {
            throw SyncError.unauthorized(
                "the remote refused the credentials (\(answer.status.code) to \(method) \(path)); set CLOUDNOTES_REMOTE_USER and CLOUDNOTES_REMOTE_PASSWORD, or a netrc entry for \(base.host ?? "the host")")
        }
        return (answer.status, answer.body)
    }

    private func url(_ path: String) -> URL {
        let escaped = path.split(separator: "/", omittingEmptySubsequences: false)
            .map { $0.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"])) ?? String($0) }
            .joined(separator: "/")
        return URL(string: escaped, relativeTo: base)?.absoluteURL ?? base
    }

    private func failure(_ method: HTTPMethod, _ path: String, _ status: HTTPResponseStatus) -> SyncError {
        .unreachable("the remote answered \(status.code) \(status.reasonPhrase) to \(method) \(path)")
    }

    static func parent(of path: String) -> String {
        path.split(separator: "/").dropLast().joined(separator: "/")
    }

    /// The names of the members in a PROPFIND multistatus answer, but the folder itself.
    ///
    /// Only `href` elements are read, whatever their namespace prefix (`D:`, `d:`, `lp1:` or none):
    /// servers differ there, and nothing else of the answer is needed.
    static func childNames(inMultistatus body: Data, of folder: String) -> [String] {
        let text = String(decoding: body, as: UTF8.self)
        let pattern = #/<(?:[A-Za-z0-9]+:)?href[^>]*>([^<]*)</(?:[A-Za-z0-9]+:)?href>/#
        let folderPath = folder.hasSuffix("/") ? folder : folder + "/"
        return text.matches(of: pattern).compactMap { match in
            var href = String(match.1).trimmingCharacters(in: .whitespaces)
            if let url = URL(string: href), url.host != nil { href = url.path }
            href = href.removingPercentEncoding ?? href
            if href.hasSuffix("/") { href.removeLast() }
            guard href.count > folderPath.count - 1, href != String(folderPath.dropLast()) else { return nil }
            return href.split(separator: "/").last.map(String.init)
        }
    }
}
