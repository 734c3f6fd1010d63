import Foundation
import Testing

@testable import CloudNotesSync

@Suite("Remote URLs and credentials")
struct RemoteURLTests {
    @Test("folders and WebDAV collections are normalized; anything else is refused")
    func normalized() throws {
        #expect(try RemoteURL("file:///srv/notes/").normalized == "file:///srv/notes")
        #expect(try RemoteURL("https://dav.example.com/notes").normalized == "https://dav.example.com/notes/")
        for bad in ["ftp://host/x", "not a url", "file://host/x", "https://host/x?q=1", "file:relative"] {
            #expect(throws: SyncError.self) { try RemoteURL(bad) }
        }
    }

    @Test("a URL with credentials is refused without repeating them")
    func credentialsInURL() {
        do {
            _ = try RemoteURL("https://me:hunter2@dav.example.com/notes/")
            Issue.record("accepted a URL with a password")
        } catch {
            #expect(!"\(error)".contains("hunter2"))
        }
    }

    @Test("the environment wins over netrc; netrc matches the host, else its default entry")
    func credentials() {
        let url = URL(string: "https://dav.example.com/notes/")!
        #expect(Credentials.find(for: url, environment: ["CLOUDNOTES_REMOTE_USER": "u", "CLOUDNOTES_REMOTE_PASSWORD": "p"])
                == Credentials(user: "u", password: "p"))
        let netrc = "machine other.example.com login x password y\nmachine dav.example.com\n  login me\n  password s3cret\ndefault login anon password none\n"
        #expect(Credentials.netrcEntry(in: netrc, host: "DAV.example.com") == Credentials(user: "me", password: "s3cret"))
        #expect(Credentials.netrcEntry(in: netrc, host: "unknown.example.com") == Credentials(user: "anon", password: "none"))
    }

    @Test("a PROPFIND answer's members are read whatever the namespace prefix")
    func multistatus() {
        let apache = #"<D:multistatus xmlns:D="DAV:"><D:response><D:href>/dav/x/devices/</D:href></D:response><D:response><D:href>/dav/x/devices/0123456789abcdef0123456789abcdef/</D:href></D:response></D:multistatus>"#
        #expect(WebDAVRemote.childNames(inMultistatus: Data(apache.utf8), of: "/dav/x/devices") == ["0123456789abcdef0123456789abcdef"])
        let other = #"<multistatus xmlns="DAV:"><response><href>http://h/dav/x/devices</href></response><response><href>http://h/dav/x/devices/a%20b</href></response></multistatus>"#
        #expect(WebDAVRemote.childNames(inMultistatus: Data(other.utf8), of: "/dav/x/devices") == ["a b"])
    }
}
