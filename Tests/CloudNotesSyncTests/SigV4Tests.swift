import Foundation
import Testing

@testable import CloudNotesSync

/// The S3 signer against botocore's `S3SigV4Auth`, run at test time (`Oracles/botocore_sigv4.py`): the
/// same requests must get the same Authorization header, byte for byte.
@Suite("SigV4")
struct SigV4Tests {
    struct Case: Encodable {
        var method: String
        var url: String
        var headers: [[String]]
        var body: String
        var time: Double
        var accessKey = "AKIDEXAMPLE"
        var secretKey = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
        var sessionToken: String?
        var region = "us-east-1"
    }

    static let table: [Case] = {
        let time = 1_765_186_200.0  // 2025-12-08T09:30:00Z
        let segment = "devices/0123456789abcdef0123456789abcdef/segments/000000000001.jsonl"
        let body = Data("{\"format\":2}\n".utf8).base64EncodedString()
        return [
            Case(method: "GET", url: "http://127.0.0.1:9000/notes/my/notes/cloudnotes-sync.json", headers: [], body: "", time: time),
            Case(method: "PUT", url: "http://127.0.0.1:9000/notes/my/notes/\(segment)",
                 headers: [["Content-Type", "application/octet-stream"]], body: body, time: time),
            Case(method: "GET", url: "https://notes.s3.eu-west-3.amazonaws.com/?continuation-token=1%2Fabc%3D%3D&delimiter=%2F&list-type=2&prefix=my%20notes%2Fdevices%2F",
                 headers: [], body: "", time: time + 86_399, region: "eu-west-3"),
            Case(method: "DELETE", url: "https://notes.s3.us-west-2.amazonaws.com/caf%C3%A9/%E2%9C%93/head.json", headers: [],
                 body: "", time: time, sessionToken: "FwoGZXIvYXdzEJr//////////wEaDOEXAMPLETOKEN+/=", region: "us-west-2"),
            Case(method: "PUT", url: "http://localhost:5000/bucket/a%20b/c~d_e.f-g",
                 headers: [["Content-Type", "text/plain;  charset=utf-8"], ["If-None-Match", "*"]],
                 body: Data(repeating: 0x41, count: 70_000).base64EncodedString(), time: time + 1),
        ]
    }()

    @Test("every request of the table is signed as botocore signs it")
    func matchesBotocore() throws {
        let expected = try botocore(Self.table)
        #expect(expected.count == Self.table.count)
        for (row, authorization) in zip(Self.table, expected) {
            let signer = SigV4Signer(accessKey: row.accessKey, secretKey: row.secretKey, sessionToken: row.sessionToken,
                                     region: row.region)
            let headers = row.headers.map { ($0[0], $0[1]) }
            let added = signer.signedHeaders(method: row.method, url: try #require(URL(string: row.url)), headers: headers,
                                             payload: Data(base64Encoded: row.body), date: Date(timeIntervalSince1970: row.time))
            #expect(added.first { $0.0 == "Authorization" }?.1 == authorization, "\(row.method) \(row.url)")
        }
    }

    /// The Authorization headers botocore computes for `cases`.
    private func botocore(_ cases: [Case]) throws -> [String] {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Oracles/botocore_sigv4.py")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(try JSONEncoder().encode(cases))
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "botocore's signer failed: is botocore installed (scripts/test)?")
        return try JSONDecoder().decode([String].self, from: data)
    }
}
