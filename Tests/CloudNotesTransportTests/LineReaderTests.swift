import Foundation
import Synchronization
import Testing

@testable import CloudNotesTransport

@Suite("Line reader")
struct LineReaderTests {
    /// The frames the reader finds in `input`, written to a pipe in one go.
    func frames(_ input: [UInt8], maxLineBytes: Int = 16) throws -> [String] {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let writeEnd = fds[1]
        let writer = Thread {
            input.withUnsafeBytes { _ = write(writeEnd, $0.baseAddress, $0.count) }
            close(writeEnd)
        }
        writer.start()
        var found: [String] = []
        LineReader(fileDescriptor: fds[0], maxLineBytes: maxLineBytes).readLoop { frame in
            switch frame {
            case .line(let data): found.append(String(decoding: data, as: UTF8.self))
            case .oversized(let count): found.append("oversized \(count)")
            }
        }
        close(fds[0])
        return found
    }

    @Test("lines end at \\n; a \\r before it is dropped; a last line without \\n counts")
    func splitsLines() throws {
        #expect(try frames(Array("a\nb\r\n\nc".utf8)) == ["a", "b", "", "c"])
    }

    @Test("a line over the limit is dropped whole and reading carries on")
    func oversizedLines() throws {
        let long = String(repeating: "x", count: 100)
        #expect(try frames(Array("\(long)\nok\n".utf8)) == ["oversized 100", "ok"])
    }

    @Test("lines longer than one read are put together")
    func longLines() throws {
        let long = String(repeating: "y", count: 2 * LineReader.readSize + 12_345)
        #expect(try frames(Array("\(long)\nz\n".utf8), maxLineBytes: 1 << 20) == [long, "z"])
    }
}
