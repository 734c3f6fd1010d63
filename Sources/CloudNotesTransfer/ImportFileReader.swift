import CloudNotesBytes
import CloudNotesJSON
import CloudNotesProtocol
import Foundation

// MARK: - Reading an import file

/// Reads the entries of an import file (a JSON array of memos) a few at a time, so that importing a
/// file of any size takes the same, small amount of memory.
///
/// The array's elements come from `JSONArrayReader` as the file is read, and are decoded one by one;
/// an error names the element's 0-based index.
final class ImportFileReader {
    let path: String
    private let handle: FileHandle
    private var array: JSONArrayReader
    private let progress: Progress
    var entriesRead: Int { array.elementsRead }
    var bytesRead: Int { progress.bytesRead }
    let fileSize: Int
    /// Bytes read from the file at a time.
    let chunkSize: Int

    /// How much of the file was read, counted as the array reader asks for more.
    private final class Progress {
        var bytesRead = 0
    }

    init(path: String, chunkSize: Int = 1 << 20) throws(ResponseError) {
        self.path = path
        self.chunkSize = chunkSize
        // The path is taken literally: no tilde or variable expansion, no shell.
        guard let handle = FileHandle(forReadingAtPath: path) else {
            let reason = FileManager.default.fileExists(atPath: path) ? "the file cannot be read" : "there is no such file"
            throw .importInvalid("cannot read the file: \(reason)", path: path)
        }
        self.handle = handle
        fileSize = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        let progress = Progress()
        self.progress = progress
        let descriptor = handle.fileDescriptor
        array = JSONArrayReader { buffer in
            let got = try Self.read(descriptor, appendingTo: &buffer, chunkSize: chunkSize)
            progress.bytesRead += got
            return got > 0
        }
    }

    deinit { try? handle.close() }

    /// The next entries, at most `limit`, and no more once their elements' bytes (separators and
    /// spaces between them not counted) reach `byteLimit`: the last entry may take them past it, and
    /// there is at least one, whatever its length. Empty once the array has ended.
    func next(limit: Int, byteLimit: Int = .max) throws(ResponseError) -> [ImportEntry] {
        var entries: [ImportEntry] = []
        var bytes = 0
        do {
            while entries.count < limit, bytes < byteLimit {
                let index = array.elementsRead
                guard let (entry, size) = try array.next({ element in (try decode(element, index: index), element.count) }) else { break }
                entries.append(entry)
                bytes += size
            }
        } catch let error as ResponseError {
            throw error
        } catch let problem as JSONArrayReader.Problem {
            throw .importInvalid(Self.reason(problem), path: path)
        } catch {
            throw .importInvalid("cannot read the file: \(error)", path: path)
        }
        return entries
    }

    /// The entry whose JSON text is `element`; an error names its index.
    private func decode(_ element: UnsafeBufferPointer<UInt8>, index: Int) throws(ResponseError) -> ImportEntry {
        // Its UTF-8 is checked first, whole, sixteen bytes a step: the standard library's check of each
        // string was a twelfth of the reading thread's time.
        guard UTF8Validation.isValid(UnsafeRawBufferPointer(element)) else {
            throw .importInvalid("entry is not UTF-8 text", index: index, path: path)
        }
        do {
            return try JSONDecoding.decode(ImportEntry.self, from: element, knownValidUTF8: true)
        } catch let error as ResponseError {
            throw .importInvalid(error.data?["reason"]?.stringValue ?? error.message, index: index, path: path)
        } catch {
            throw .importInvalid("entry is not valid JSON", index: index, path: path)
        }
    }

    /// What a problem of the array's syntax is called in an error.
    private static func reason(_ problem: JSONArrayReader.Problem) -> String {
        switch problem {
        case .notAnArray: "the file is not a JSON array of memos"
        case .noSeparator(let index): "expected ',' or ']' after entry \(index)"
        case .endsInsideArray: "the file ends inside the array"
        case .endsInsideElement(let index): "the file ends inside entry \(index)"
        case .textAfterArray: "text after the end of the array"
        }
    }

    /// Appends the next chunk of the file to `buffer`; returns how many bytes came (0 at the end).
    ///
    /// Read with `read(2)` straight into the buffer: Foundation's `FileHandle.read(upToCount:)` read a
    /// large file in many small calls, and copied each chunk once more from its `Data`.
    private static func read(_ descriptor: Int32, appendingTo buffer: inout [UInt8], chunkSize: Int) throws -> Int {
        let kept = buffer.count
        buffer.append(contentsOf: repeatElement(0, count: chunkSize))
        var got: Int
        repeat {
            got = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress! + kept, chunkSize) }
        } while got < 0 && errno == EINTR
        let failure = got < 0 ? errno : 0
        buffer.removeLast(chunkSize - max(got, 0))
        if got < 0 { throw ReadFailure(reason: String(cString: strerror(failure))) }
        return got
    }

    private struct ReadFailure: Error, CustomStringConvertible {
        let reason: String
        var description: String { reason }
    }
}
