import Foundation
import Testing

@testable import CloudNotesTransport

@Suite("Message writer")
struct MessageWriterTests {
    /// Everything written to a pipe while `body` writes through a `MessageWriter` on its other end.
    func output(of body: (MessageWriter) -> Void) throws -> [String] {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        let (readEnd, writeEnd) = (ends[0], ends[1])
        let received = ReceivedBytes()
        // A reader slower than the writer, so that the pipe fills and writes come back partial.
        let reader = Thread {
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = chunk.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
                guard count > 0 else { break }
                received.append(chunk[..<count])
                usleep(50)
            }
            received.finish()
        }
        reader.start()
        body(MessageWriter(fileDescriptor: writeEnd))
        close(writeEnd)
        let bytes = received.wait()
        close(readEnd)
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    @Test("a long reply behind a short message in a batch comes out whole, after it")
    func longMessageAfterAShortOne() throws {
        let long = String(repeating: "회의 notes\n", count: 30_000)  // 420 KB escaped: many partial writes
        let lines = try output { writer in
            writer.startBatch()
            writer.sendResult("short", id: .number(1))
            writer.sendResult(long, id: .number(2))
            writer.sendResult("after", id: .number(3))
            writer.finishBatch()
        }
        let results = try lines.map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
        #expect(results.map { $0["id"] as? Int } == [1, 2, 3])
        #expect(results.map { $0["result"] as? String } == ["short", long, "after"])
    }
}

/// Bytes a reader thread collects, handed over once it saw the end.
final class ReceivedBytes: @unchecked Sendable {
    private let condition = NSCondition()
    private var bytes: [UInt8] = []
    private var done = false

    func append(_ chunk: ArraySlice<UInt8>) {
        condition.lock()
        bytes.append(contentsOf: chunk)
        condition.unlock()
    }

    func finish() {
        condition.lock()
        done = true
        condition.broadcast()
        condition.unlock()
    }

    func wait() -> [UInt8] {
        condition.lock()
        while !done { condition.wait() }
        defer { condition.unlock() }
        return bytes
    }
}
