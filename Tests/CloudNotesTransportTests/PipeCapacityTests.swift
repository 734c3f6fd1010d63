import Foundation
import Testing

@testable import CloudNotesTransport

@Suite("Pipe capacity")
struct PipeCapacityTests {
    /// The most an unprivileged process may ask for here (`/proc/sys/fs/pipe-max-size`).
    var systemLimit: Int? {
        (try? String(contentsOfFile: "/proc/sys/fs/pipe-max-size", encoding: .utf8))
            .flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    @Test("a pipe gets 256 KB, and keeps it when asked again")
    func enlargesAPipe() throws {
        let limit = try #require(systemLimit, "no /proc/sys/fs/pipe-max-size: not Linux")
        try #require(limit >= PipeCapacity.preferredBytes, "this system caps pipes below 256 KB")
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        defer { close(ends[0]); close(ends[1]) }
        #expect(PipeCapacity.enlarge(fileDescriptor: ends[1]) == PipeCapacity.preferredBytes)
        // Both ends share the buffer: the reader's end reports it too.
        #expect(PipeCapacity.enlarge(fileDescriptor: ends[0]) == PipeCapacity.preferredBytes)
        // A capacity already above the one asked for is not lowered.
        #expect(PipeCapacity.enlarge(fileDescriptor: ends[1], to: 4096) == PipeCapacity.preferredBytes)
    }

    @Test("a file or a closed descriptor is left alone")
    func leavesOtherDescriptorsAlone() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("pipe-capacity-\(getpid())").path
        let file = open(path, O_CREAT | O_RDWR | O_TRUNC, 0o600)
        try #require(file >= 0)
        defer { close(file); unlink(path) }
        #expect(PipeCapacity.enlarge(fileDescriptor: file) == nil)
        #expect(PipeCapacity.enlarge(fileDescriptor: -1) == nil)
    }
}
