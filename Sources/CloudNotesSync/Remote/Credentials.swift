import Foundation

// MARK: - Credentials

/// A WebDAV user name and password: from the environment, else from a netrc file; never from argv.
public struct Credentials: Sendable, Hashable {
    public var user: String
    public var password: String

    /// `CLOUDNOTES_REMOTE_USER` and `CLOUDNOTES_REMOTE_PASSWORD` if set; else the netrc entry for the
    /// URL's host (the file `NETRC` names, or `~/.netrc`); else none.
    public static func find(for url: URL, environment: [String: String]) -> Credentials? {
        if let user = environment["CLOUDNOTES_REMOTE_USER"], !user.isEmpty {
            return Credentials(user: user, password: environment["CLOUDNOTES_REMOTE_PASSWORD"] ?? "")
        }
        let path = environment["NETRC"] ?? ((environment["HOME"] ?? NSHomeDirectory()) + "/.netrc")
        guard let host = url.host, let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        return netrcEntry(in: text, host: host)
    }

    /// The login and password of `machine host` in a netrc file's text, or of `default` if no machine matches.
    static func netrcEntry(in text: String, host: String) -> Credentials? {
        var tokens = text.split(whereSeparator: { $0.isWhitespace }).map(String.init)[...]
        var entries: [(machine: String?, login: String?, password: String?)] = []
        while let token = tokens.popFirst() {
            switch token {
            case "machine": entries.append((tokens.popFirst(), nil, nil))
            case "default": entries.append((nil, nil, nil))
            case "login" where !entries.isEmpty: entries[entries.count - 1].login = tokens.popFirst()
            case "password" where !entries.isEmpty: entries[entries.count - 1].password = tokens.popFirst()
            case "account", "macdef": _ = tokens.popFirst()
            default: break
            }
        }
        let entry = entries.first { $0.machine?.lowercased() == host.lowercased() } ?? entries.first { $0.machine == nil }
        guard let entry, let login = entry.login else { return nil }
        return Credentials(user: login, password: entry.password ?? "")
    }
}
