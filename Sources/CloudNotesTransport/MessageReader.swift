import Foundation

// MARK: - Reading messages

/// Reads the client's messages from a file descriptor on a thread of its own, in whichever framing the
/// client speaks (see `FrameSplitter`).
///
/// A dedicated thread keeps blocking `read(2)` off the concurrency pool, and lets messages (such as
/// `$/cancelRequest`) be seen while earlier requests are still being handled.
public final class MessageReader: Sendable {
    let fileDescriptor: Int32
    let maxMessageBytes: Int

    public init(fileDescriptor: Int32, maxMessageBytes: Int) {
        self.fileDescriptor = fileDescriptor
        self.maxMessageBytes = maxMessageBytes
    }

    /// Starts reading on a thread of its own. `onFraming` runs once, when the first bytes decide the
    /// framing and before the first frame; `onFrame` runs for each frame; `onEnd` once at end of input.
    public func start(
        onFraming: @escaping @Sendable (Framing) -> Void,
        onFrame: @escaping @Sendable (Frame) -> Void,
        onEnd: @escaping @Sendable () -> Void
    ) {
        let thread = Thread { [self] in
            readLoop(onFraming: onFraming, onFrame: onFrame)
            onEnd()
        }
        thread.name = "cloudnotes.stdin"
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// The most one `read(2)` takes.
    static let readSize = 1 << 18

    /// Reads until end of input, handing on each frame; internal for tests that feed it a pipe.
    func readLoop(onFraming: (Framing) -> Void = { _ in }, onFrame: (Frame) -> Void) {
        var splitter = FrameSplitter(maxMessageBytes: maxMessageBytes)
        var framing: Framing?
        var frames: [Frame] = []
        /// Hands on the frames of the bytes just split, after the framing they were read in.
        func deliver() {
            if framing == nil, let found = splitter.framing {
                framing = found
                onFraming(found)
            }
            for frame in frames { onFrame(frame) }
            frames.removeAll(keepingCapacity: true)
        }
        // A long memo's message in one read (the pipe holds 256 KB: see `PipeCapacity`), rather than in
        // pieces that the splitter copies and grows around.
        var chunk = [UInt8](repeating: 0, count: Self.readSize)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fileDescriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            chunk.withUnsafeBytes { splitter.feed(UnsafeRawBufferPointer(rebasing: $0[..<count])) { frames.append($0) } }
            deliver()
        }
        splitter.finish { frames.append($0) }
        deliver()
    }
}
