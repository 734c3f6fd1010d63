import Crypto
import Foundation

// MARK: - AWS Signature Version 4

/// Signs S3 requests with AWS Signature Version 4, on swift-crypto's SHA-256 and HMAC.
///
/// Written here because no Swift S3 library is available to this project; its signatures are checked
/// against botocore's `S3SigV4Auth` for a table of requests (`SigV4Tests`).
struct SigV4Signer: Sendable {
    var accessKey: String
    var secretKey: String
    var sessionToken: String?
    var region: String
    var service = "s3"

    /// The headers to add to a request: `x-amz-date`, `x-amz-content-sha256`, `x-amz-security-token`
    /// (with a session token) and `Authorization`. `headers` are the request's others, which are signed
    /// too; `url`'s path must be percent-encoded already, as it is sent.
    func signedHeaders(method: String, url: URL, headers: [(String, String)], payload: Data?, date: Date) -> [(String, String)] {
        let amzDate = Self.timestamp(date)
        let day = String(amzDate.prefix(8))
        let payloadHash = SHA256.hash(data: payload ?? Data()).hexString
        var added = [("x-amz-date", amzDate), ("x-amz-content-sha256", payloadHash)]
        if let sessionToken { added.append(("x-amz-security-token", sessionToken)) }
        var signed: [String: [String]] = [:]
        for (name, value) in headers + added + [("host", Self.host(of: url))] {
            signed[name.lowercased(), default: []].append(Self.trimmed(value))
        }
        let names = signed.keys.sorted()
        let canonicalHeaders = names.map { "\($0):\(signed[$0]!.joined(separator: ","))\n" }.joined()
        let signedNames = names.joined(separator: ";")
        let canonicalRequest = [method, Self.canonicalPath(url), Self.canonicalQuery(url), canonicalHeaders, signedNames,
                                payloadHash].joined(separator: "\n")
        let scope = "\(day)/\(region)/\(service)/aws4_request"
        let stringToSign = ["AWS4-HMAC-SHA256", amzDate, scope, SHA256.hash(data: Data(canonicalRequest.utf8)).hexString]
            .joined(separator: "\n")
        var key = SymmetricKey(data: Data("AWS4\(secretKey)".utf8))
        for part in [day, region, service, "aws4_request"] {
            key = SymmetricKey(data: Data(HMAC<SHA256>.authenticationCode(for: Data(part.utf8), using: key)))
        }
        let signature = HMAC<SHA256>.authenticationCode(for: Data(stringToSign.utf8), using: key).hexString
        return added + [("Authorization",
                         "AWS4-HMAC-SHA256 Credential=\(accessKey)/\(scope), SignedHeaders=\(signedNames), Signature=\(signature)")]
    }

    /// `20261208T093000Z`.
    static func timestamp(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        return String(format: "%04d%02d%02dT%02d%02d%02dZ", c.year!, c.month!, c.day!, c.hour!, c.minute!, c.second!)
    }

    /// The host header: the port only when it is not the scheme's own.
    static func host(of url: URL) -> String {
        let host = url.host ?? ""
        guard let port = url.port, !(url.scheme == "http" && port == 80), !(url.scheme == "https" && port == 443) else { return host }
        return "\(host):\(port)"
    }

    /// S3's canonical URI: the path as sent (encoded once, never normalized), `/` when empty.
    static func canonicalPath(_ url: URL) -> String {
        let path = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? ""
        return path.isEmpty ? "/" : path
    }

    /// The query's pairs, each name and value encoded as SigV4 says (RFC 3986's unreserved left as is),
    /// sorted by name, then value.
    static func canonicalQuery(_ url: URL) -> String {
        guard let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems else { return "" }
        let pairs: [(name: String, value: String)] = items.map { (encode($0.name), encode($0.value ?? "")) }
        let sorted = pairs.sorted { left, right in left.name == right.name ? left.value < right.value : left.name < right.name }
        return sorted.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
    }

    static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// Percent-encodes all but RFC 3986's unreserved characters, as SigV4 does.
    static func encode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }

    /// A header value with its ends trimmed and inner runs of spaces made one.
    private static func trimmed(_ value: String) -> String {
        value.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
            .trimmingCharacters(in: .whitespaces)
    }
}

extension Sequence where Element == UInt8 {
    /// Lowercase hex.
    var hexString: String { map { String(format: "%02x", $0) }.joined() }
}
