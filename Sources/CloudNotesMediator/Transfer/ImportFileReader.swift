import CloudNotesJSON
import CloudNotesProtocol
import Foundation

// MARK: - Reading an import file

/// Reads the entries of an import file (a JSON array of memos) a few at a time, so that importing a
/// file of any size takes the same, small amount of memory.
///
/// The reader finds where each element of the top-level array ends (counting brackets outside
/// strings), and decodes elements one by one; an error names the element's 0-based index.
final class ImportFileReader {
    let path: String
    private let handle: FileHandle
    /// Bytes read but not consumed yet.
    private var buffer: [UInt8] = []
    private var position = 0
    private var atEnd = false
    private var sawOpening = false
    private var finished = false
    private(set) var entriesRead = 0
    private(set) var bytesRead = 0
    let fileSize: Int
    /// Bytes read from the file at a time.
    let chunkSize: Int

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
    }

    deinit { try? handle.close() }

    /// The next entries, at most `limit`, and no more once their elements' bytes (separators and
    /// spaces between them not counted) reach `byteLimit`: the last entry may take them past it, and
    /// there is at least one, whatever its length. Empty once the array has ended.
    func next(limit: Int, byteLimit: Int = .max) throws(ResponseError) -> [ImportEntry] {
        var entries: [ImportEntry] = []
        var bytes = 0
        while entries.count < limit, bytes < byteLimit, let element = try nextElement() {
            entries.append(try decode(element))
            bytes += element.count
        }
        return entries
    }

    // MARK: Elements

    /// Where the next array element lies in `buffer` (valid until the next read), or nil after the
    /// closing bracket.
    private func nextElement() throws(ResponseError) -> Range<Int>? {
        guard !finished else { return nil }
        if !sawOpening {
            guard try nextSignificantByte() == UInt8(ascii: "[") else { throw invalid("the file is not a JSON array of memos") }
            position += 1
            sawOpening = true
            if try nextSignificantByte() == UInt8(ascii: "]") { return try close() }
        } else {
            switch try nextSignificantByte() {
            case UInt8(ascii: ","):
                position += 1
            case UInt8(ascii: "]"):
                return try close()
            default:
                throw invalid("expected ',' or ']' after entry \(entriesRead - 1)")
            }
        }
        guard try nextSignificantByte() != nil else { throw invalid("the file ends inside the array") }
        return try elementRange()
    }

    private func close() throws(ResponseError) -> Range<Int>? {
        position += 1
        finished = true
        if try nextSignificantByte() != nil { throw invalid("text after the end of the array") }
        return nil
    }

    /// Finds the end of the value at `position` (its first byte is there), reading more of the file as
    /// needed, and moves past it.
    private func elementRange() throws(ResponseError) -> Range<Int> {
        var scanner = ElementScanner(first: buffer[position])
        var scan = position
        while true {
            let from = scan
            if let end = buffer.withUnsafeBufferPointer({ scanner.end(in: $0, from: from) }) {
                return take(upTo: end)
            }
            let scanned = buffer.count - position
            guard try readMore() else {
                if scanner.isScalar { return take(upTo: buffer.count) }
                throw invalid("the file ends inside entry \(entriesRead)")
            }
            scan = position + scanned
        }
    }

    private func take(upTo end: Int) -> Range<Int> {
        defer { position = end }
        return position..<end
    }

    /// The entry whose JSON text is `buffer[element]`; an error names its index.
    private func decode(_ element: Range<Int>) throws(ResponseError) -> ImportEntry {
        let index = entriesRead
        entriesRead += 1
        // A well-formed entry (nearly every one) is parsed into a tree, which copies the runs between
        // escapes in bulk, at about a fifth of what Foundation's decoder costs a memo's text (see
        // `JSONTree`); the tree decoder gives up wherever Foundation must decide. Its UTF-8 is checked
        // first, whole, sixteen bytes a step: the standard library's check of each string was a twelfth
        // of the reading thread's time.
        let decoded = buffer.withUnsafeBufferPointer { bytes -> ImportEntry? in
            let entry = UnsafeBufferPointer(rebasing: bytes[element])
            guard UTF8Validation.isValid(UnsafeRawBufferPointer(entry)) else { return nil }
            return JSONTree.parse(entry, knownValidUTF8: true).flatMap { JSONTreeDecoder.decode(ImportEntry.self, from: $0) }
        }
        if let decoded { return decoded }
        // Anything else is decoded again by Foundation, which says what is wrong with it.
        let bytes = buffer[element]
        guard String(validating: bytes, as: UTF8.self) != nil else {
            throw .importInvalid("entry is not UTF-8 text", index: index, path: path)
        }
        do {
            return try JSONDecoder().decode(ImportEntry.self, from: Data(bytes))
        } catch let error as ResponseError {
            throw .importInvalid(error.data?["reason"]?.stringValue ?? error.message, index: index, path: path)
        } catch {
            throw .importInvalid("entry is not valid JSON", index: index, path: path)
        }
    }

    // MARK: Bytes

    /// The next byte that is not white space, reading more as needed; nil at the end of the file.
    private func nextSignificantByte() throws(ResponseError) -> UInt8? {
        while true {
            while position < buffer.count {
                guard isJSONSpace(buffer[position]) else { return buffer[position] }
                position += 1
            }
            guard try readMore() else { return nil }
        }
    }

    /// Appends the next chunk of the file, dropping what was consumed; false at the end of the file.
    ///
    /// Read with `read(2)` straight into the buffer: Foundation's `FileHandle.read(upToCount:)` read a
    /// 168 MB file in 41,000 calls of 4 KB, and copied each chunk once more from its `Data`.
    private func readMore() throws(ResponseError) -> Bool {
        guard !atEnd else { return false }
        buffer.removeFirst(position)
        position = 0
        let kept = buffer.count
        buffer.append(contentsOf: repeatElement(0, count: chunkSize))
        let descriptor = handle.fileDescriptor
        var got: Int
        repeat {
            got = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + kept, chunkSize) }
        } while got < 0 && errno == EINTR
        let failure = got < 0 ? errno : 0
        buffer.removeLast(chunkSize - max(got, 0))
        if got < 0 {
            throw .importInvalid("cannot read the file: \(String(cString: strerror(failure)))", path: path)
        }
        if got == 0 {
            atEnd = true
            return false
        }
        bytesRead += got
        return true
    }

    private func invalid(_ reason: String) -> ResponseError {
        .importInvalid(reason, path: path)
    }
}

// MARK: - Where an element ends

/// Finds where one element of the array ends, across reads of the file: the scan's state between them.
///
/// A container ends at the bracket that closes it, outside strings; a string at its closing quote; a
/// number or a literal at the next separator or space. Inside a string, the scan jumps from one byte
/// that matters there (`"`, `\`, a control byte) to the next, sixteen bytes a step
/// (`JSONStringBytes.firstSpecial`): the texts are most of an import file's bytes.
private struct ElementScanner {
    private let isContainer: Bool
    private let isString: Bool
    private var depth = 0
    private var inString = false
    private var escaped = false

    /// For the element whose first byte is `first`.
    init(first: UInt8) {
        isContainer = first == UInt8(ascii: "{") || first == UInt8(ascii: "[")
        isString = first == UInt8(ascii: "\"")
    }

    /// A number or a literal: it ends where the file does, if nothing ends it before.
    var isScalar: Bool { !isContainer && !isString }

    /// The index just past the element's end, scanning `bytes` from `start` (the element's first byte, or
    /// where the last call stopped), or nil when the bytes end first.
    mutating func end(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        var scan = start
        if isScalar {
            while scan < bytes.count {
                let byte = bytes[scan]
                if byte == UInt8(ascii: ",") || byte == UInt8(ascii: "]") || isJSONSpace(byte) { return scan }
                scan += 1
            }
            return nil
        }
        while scan < bytes.count {
            if inString, !escaped {
                scan = JSONStringBytes.firstSpecial(in: bytes, from: scan)
                if scan == bytes.count { return nil }
            }
            let byte = bytes[scan]
            scan += 1
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                    if isString { return scan }
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                if depth == 0 { return scan }
            default: break
            }
        }
        return nil
    }
}

/// Whether `byte` is white space between JSON values (RFC 8259: space, tab, line feed, carriage return).
private func isJSONSpace(_ byte: UInt8) -> Bool {
    byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") || byte == UInt8(ascii: "\t")
}
