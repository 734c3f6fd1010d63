import Foundation
import NIOHTTP1
import Synchronization

// MARK: - S3 remote

/// A remote under a key prefix of an S3 bucket (AWS, R2, B2, MinIO, Wasabi…), through AsyncHTTPClient,
/// with requests signed by `SigV4Signer`.
///
/// Uses GetObject, PutObject (conditional where sync asks, and the server honours it), DeleteObject and
/// ListObjectsV2. Folders are key prefixes: making one is nothing, and removing one removes every object
/// under it. Errors name the operation, the path, the status and S3's error code, never the credentials.
public final class S3Remote: Remote {
    private let settings: S3Settings
    private let http: HTTPExchange
    /// What this remote last saw at each key it read or wrote: its ETag, or nothing there; the ground
    /// of `write(_:_:if: .unchanged)`.
    private let seen = Mutex<[String: Seen]>([:])

    private enum Seen {
        case absent
        case tagged(String)
    }

    init(settings: S3Settings, timeout: Duration) {
        self.settings = settings
        http = HTTPExchange(displayURL: Self.displayURL(settings), timeout: timeout)
    }

    public var displayURL: String { http.displayURL }
    public var requestCount: Int { http.requestCount }

    static func displayURL(_ settings: S3Settings) -> String {
        "s3://\(settings.bucket)" + (settings.prefix.isEmpty ? "" : "/\(settings.prefix)")
    }

    public func read(_ path: String) async throws -> Data? {
        let key = settings.key(path)
        let answer = try await send(.GET, key: key, what: "GET \(path)")
        switch answer.status.code {
        case 200:
            note(key, answer)
            return answer.body
        case 404 where Self.errorCode(answer) != "NoSuchBucket":
            seen.withLock { $0[key] = .absent }
            return nil
        default: throw failure("GET \(path)", answer)
        }
    }

    public func write(_ path: String, _ data: Data) async throws {
        try await put(path, data, conditions: [])
    }

    /// PutObject with `If-None-Match: *` (absent) or `If-Match` with the ETag last seen (unchanged).
    /// Servers that ignore them (rclone) write all the same, as a folder does.
    public func write(_ path: String, _ data: Data, if condition: WriteCondition) async throws {
        switch (condition, seen.withLock { $0[settings.key(path)] }) {
        case (.absent, _), (.unchanged, .absent?): try await put(path, data, conditions: [("If-None-Match", "*")])
        case (.unchanged, .tagged(let tag)?): try await put(path, data, conditions: [("If-Match", tag)])
        case (.unchanged, nil): try await put(path, data, conditions: [])
        }
    }

    private func put(_ path: String, _ data: Data, conditions: [(String, String)]) async throws {
        let key = settings.key(path)
        let answer = try await send(.PUT, key: key, what: "PUT \(path)", body: data,
                                    headers: [("Content-Type", "application/octet-stream")] + conditions)
        // 412 when the condition is false; AWS answers 409 to a write racing another conditional one.
        if !conditions.isEmpty, answer.status == .preconditionFailed || answer.status == .conflict {
            throw RemoteWriteConflict(path: path)
        }
        guard (200...299).contains(answer.status.code) else { throw failure("PUT \(path)", answer) }
        note(key, answer)
    }

    /// Remembers the ETag an answer gives for `key`, or forgets what was seen there when it gives none.
    private func note(_ key: String, _ answer: HTTPExchange.Answer) {
        let tag = answer.headers.first(name: "ETag")
        seen.withLock { $0[key] = tag.map(Seen.tagged) }
    }

    /// Nothing: in S3 a folder is the prefix of the keys under it.
    public func makeFolder(_ path: String) async throws {}

    public func list(_ path: String) async throws -> [String] {
        let prefix = settings.key(path) + "/"
        var names: [String] = []
        var token: String?
        repeat {
            let page = try await listPage(prefix: prefix, delimiter: true, token: token)
            names += (page.keys + page.folders).compactMap { name in
                let rest = name.dropFirst(prefix.count).split(separator: "/").first.map(String.init)
                return rest?.isEmpty == false ? rest : nil
            }
            token = page.next
        } while token != nil
        return names
    }

    public func removeFile(_ path: String) async throws {
        try await delete(key: settings.key(path), what: "DELETE \(path)")
    }

    public func removeFolder(_ path: String) async throws {
        let prefix = settings.key(path) + "/"
        var token: String?
        repeat {
            let page = try await listPage(prefix: prefix, delimiter: false, token: token)
            for key in page.keys { try await delete(key: key, what: "DELETE \(key)") }
            token = page.next
        } while token != nil
    }

    // MARK: Requests

    private func delete(key: String, what: String) async throws {
        let answer = try await send(.DELETE, key: key, what: what)
        seen.withLock { $0[key] = nil }
        guard (200...299).contains(answer.status.code) || (answer.status == .notFound && Self.errorCode(answer) != "NoSuchBucket") else {
            throw failure(what, answer)
        }
    }

    /// One page of ListObjectsV2: the keys, the folders (common prefixes, with `delimiter`), and the
    /// token of the next page, if any.
    private func listPage(prefix: String, delimiter: Bool, token: String?) async throws -> (keys: [String], folders: [String], next: String?) {
        var query = [("list-type", "2"), ("prefix", prefix)]
        if delimiter { query.append(("delimiter", "/")) }
        if let token { query.append(("continuation-token", token)) }
        let answer = try await send(.GET, key: "", query: query, what: "LIST \(prefix)")
        guard answer.status == .ok else { throw failure("LIST \(prefix)", answer) }
        let xml = String(decoding: answer.body, as: UTF8.self)
        let keys = Self.elements("Key", in: xml)
        let folders = Self.elements("Prefix", in: Self.elements("CommonPrefixes", in: xml).joined())
        let truncated = Self.elements("IsTruncated", in: xml).first == "true"
        return (keys, folders, truncated ? Self.elements("NextContinuationToken", in: xml).first : nil)
    }

    private func send(_ method: HTTPMethod, key: String, query: [(String, String)] = [], what: String,
                      body: Data? = nil, headers: [(String, String)] = []) async throws -> HTTPExchange.Answer {
        let url = settings.url(key: key, query: query)
        var all = headers
        if let signer = settings.signer {
            all += signer.signedHeaders(method: method.rawValue, url: url, headers: headers, payload: body, date: Date())
        }
        let answer = try await http.send(method, url, what: what, headers: all, body: body)
        if answer.status == .forbidden || answer.status == .unauthorized {
            throw SyncError.unauthorized("""
                S3 refused the request (\(answer.status.code) \(Self.errorCode(answer) ?? "") to \(what)); set AWS_ACCESS_KEY_ID and \
                AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN), or a profile in ~/.aws/credentials (AWS_PROFILE)
                """)
        }
        return answer
    }

    private func failure(_ what: String, _ answer: HTTPExchange.Answer) -> SyncError {
        let code = Self.errorCode(answer)
        if code == "NoSuchBucket" {
            return .unreachable("the bucket \(settings.bucket) does not exist: create it, or correct the remote's URL")
        }
        return .unreachable("S3 answered \(answer.status.code) \(answer.status.reasonPhrase)\(code.map { " (\($0))" } ?? "") to \(what)")
    }

    /// The `Code` of an S3 error answer's XML, if any.
    private static func errorCode(_ answer: HTTPExchange.Answer) -> String? {
        elements("Code", in: String(decoding: answer.body, as: UTF8.self)).first
    }

    /// The texts of the elements `name` in `xml`, entities decoded. S3's answers are flat enough for
    /// this, and Foundation's XML parser needs libxml2 on Linux.
    static func elements(_ name: String, in xml: String) -> [String] {
        var values: [String] = []
        var rest = xml[...]
        while let open = rest.range(of: "<\(name)>"), let close = rest.range(of: "</\(name)>", range: open.upperBound..<rest.endIndex) {
            values.append(decodeEntities(String(rest[open.upperBound..<close.lowerBound])))
            rest = rest[close.upperBound...]
        }
        return values
    }

    private static func decodeEntities(_ text: String) -> String {
        guard text.contains("&") else { return text }
        return text.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&apos;", with: "'")
            .replacingOccurrences(of: "&amp;", with: "&")
    }
}
