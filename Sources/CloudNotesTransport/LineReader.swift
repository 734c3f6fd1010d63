import Foundation

// MARK: - Line framing

/// What the reader found between two newlines.
public enum Frame: Sendable {
    /// One line without its `\n` (and without a `\r` before it).
    case line(Data)
    /// A line longer than the limit; its bytes were dropped, the reader carries on at the next line.
    case oversized(byteCount: Int)
}

/// Reads `\n`-terminated lines from a file descriptor on a thread of its own.
///
/// A dedicated thread keeps blocking `read(2)` off the concurrency pool, and lets lines (such as
/// `$/cancelRequest`) be seen while earlier requests are still being handled.
public final class LineReader: Sendable {
    let fileDescriptor: Int32
    let maxLineBytes: Int

    public init(fileDescriptor: Int32, maxLineBytes: Int) {
        self.fileDescriptor = fileDescriptor
        self.maxLineBytes = maxLineBytes
    }

    /// Starts reading; `onFrame` runs on the reader thread for each frame, `onEnd` once at end of input.
    public func start(onFrame: @escaping @Sendable (Frame) -> Void, onEnd: @escaping @Sendable () -> Void) {
        let thread = Thread { [self] in
            readLoop(onFrame: onFrame)
            onEnd()
        }
        thread.name = "cloudnotes.stdin"
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// The most one `read(2)` takes.
    static let readSize = 1 << 18

    /// Splits the input into frames; public for tests that feed it a pipe.
    func readLoop(onFrame: (Frame) -> Void) {
        var pending = Data()
        var droppedBytes = 0  // > 0 while skipping the rest of an oversized line
        // A 100 KB memo's line in one read (the pipe holds 256 KB: see `PipeCapacity`), rather than in
        // pieces that `pending` copies and grows around.
        var chunk = [UInt8](repeating: 0, count: Self.readSize)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fileDescriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            var start = 0
            while start < count {
                let newline = chunk.withUnsafeBytes { buffer -> Int? in
                    let base = buffer.baseAddress!
                    return memchr(base + start, Int32(UInt8(ascii: "\n")), count - start).map { base.distance(to: UnsafeRawPointer($0)) }
                }
                let end = newline ?? count
                if droppedBytes > 0 {
                    droppedBytes += end - start
                } else {
                    pending.append(contentsOf: chunk[start..<end])
                    if pending.count > maxLineBytes {
                        droppedBytes = pending.count
                        pending = Data()
                    }
                }
                guard newline != nil else { break }
                if droppedBytes > 0 {
                    onFrame(.oversized(byteCount: droppedBytes))
                    droppedBytes = 0
                } else {
                    emit(&pending, onFrame)
                }
                start = end + 1
            }
        }
        if droppedBytes > 0 {
            onFrame(.oversized(byteCount: droppedBytes))
        } else if !pending.isEmpty {
            emit(&pending, onFrame)  // a last line without its newline still counts
        }
    }

    private func emit(_ pending: inout Data, _ onFrame: (Frame) -> Void) {
        if pending.last == UInt8(ascii: "\r") { pending.removeLast() }
        onFrame(.line(pending))
        pending = Data()
    }
}
