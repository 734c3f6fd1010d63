import Foundation

// MARK: - Where an S3 remote is, and with which credentials

/// An S3 remote's settings, found as AWS's own tools find them: `AWS_ACCESS_KEY_ID`,
/// `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN`, else the profile `AWS_PROFILE` (or `default`) of
/// `~/.aws/credentials` (`AWS_SHARED_CREDENTIALS_FILE`); the region from `AWS_REGION`,
/// `AWS_DEFAULT_REGION` or the profile in `~/.aws/config` (`AWS_CONFIG_FILE`), else `us-east-1`; and
/// `AWS_ENDPOINT_URL` (or `AWS_ENDPOINT_URL_S3`) for a server other than AWS, addressed path-style.
struct S3Settings: Sendable {
    var bucket: String
    /// The key prefix under which the remote's files are, without slashes at its ends; may be empty.
    var prefix: String
    var endpoint: URL?
    var region: String
    var signer: SigV4Signer?

    init(bucket: String, prefix: String, environment: [String: String]) throws {
        self.bucket = bucket
        self.prefix = prefix
        let profile = environment["AWS_PROFILE"] ?? environment["AWS_DEFAULT_PROFILE"] ?? "default"
        let home = environment["HOME"] ?? NSHomeDirectory()
        let credentialsFile = Self.iniSection(
            path: environment["AWS_SHARED_CREDENTIALS_FILE"] ?? home + "/.aws/credentials", section: profile)
        let configFile = Self.iniSection(
            path: environment["AWS_CONFIG_FILE"] ?? home + "/.aws/config", section: profile == "default" ? "default" : "profile \(profile)")
        if let text = environment["AWS_ENDPOINT_URL_S3"] ?? environment["AWS_ENDPOINT_URL"], !text.isEmpty {
            guard let url = URL(string: text.hasSuffix("/") ? String(text.dropLast()) : text), let scheme = url.scheme,
                  ["http", "https"].contains(scheme.lowercased()), url.host != nil
            else { throw SyncError.badRemote("AWS_ENDPOINT_URL must be an http(s):// URL") }
            endpoint = url
        }
        region = [environment["AWS_REGION"], environment["AWS_DEFAULT_REGION"], configFile["region"]]
            .compactMap { $0 }.first { !$0.isEmpty } ?? "us-east-1"
        if let key = environment["AWS_ACCESS_KEY_ID"], !key.isEmpty {
            signer = SigV4Signer(accessKey: key, secretKey: environment["AWS_SECRET_ACCESS_KEY"] ?? "",
                                 sessionToken: environment["AWS_SESSION_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }, region: region)
        } else if let key = credentialsFile["aws_access_key_id"] {
            signer = SigV4Signer(accessKey: key, secretKey: credentialsFile["aws_secret_access_key"] ?? "",
                                 sessionToken: credentialsFile["aws_session_token"], region: region)
        }
    }

    /// The URL of the object `key`, or of the bucket when `key` is empty: path-style on an endpoint,
    /// else AWS's virtual-hosted style.
    func url(key: String, query: [(String, String)] = []) -> URL {
        let encodedKey = key.split(separator: "/", omittingEmptySubsequences: false)
            .map { SigV4Signer.encode(String($0)) }.joined(separator: "/")
        var text: String
        if let endpoint {
            text = endpoint.absoluteString + "/" + SigV4Signer.encode(bucket) + "/" + encodedKey
        } else {
            text = "https://\(bucket).s3.\(region).amazonaws.com/" + encodedKey
        }
        if !query.isEmpty {
            text += "?" + query.map { "\(SigV4Signer.encode($0.0))=\(SigV4Signer.encode($0.1))" }.joined(separator: "&")
        }
        return URL(string: text)!
    }

    /// The key of the remote's file `path`.
    func key(_ path: String) -> String { prefix.isEmpty ? path : prefix + "/" + path }

    /// The `name = value` lines of one `[section]` of an INI file (AWS's credentials and config files).
    static func iniSection(path: String, section: String) -> [String: String] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [:] }
        var values: [String: String] = [:]
        var inside = false
        for raw in text.split(whereSeparator: \.isNewline) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("[") && line.hasSuffix("]") {
                inside = line.dropFirst().dropLast().trimmingCharacters(in: .whitespaces) == section
            } else if inside, !line.hasPrefix("#"), !line.hasPrefix(";"), let equals = line.firstIndex(of: "=") {
                values[line[..<equals].trimmingCharacters(in: .whitespaces).lowercased()] =
                    line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            }
        }
        return values
    }
}
