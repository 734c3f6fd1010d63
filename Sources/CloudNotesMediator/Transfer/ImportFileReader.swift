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

    /// The bytes of the next array element, or nil after the closing bracket.
    private func nextElement() throws(ResponseError) -> [UInt8]? {
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
        return try elementBytes()
    }

    private func close() throws(ResponseError) -> [UInt8]? {
        position += 1
        finished = true
        if try nextSignificantByte() != nil { throw invalid("text after the end of the array") }
        return nil
    }

    /// Collects one value from `position` (its first byte is there), reading more of the file as needed.
    private func elementBytes() throws(ResponseError) -> [UInt8] {
        let first = buffer[position]
        let isContainer = first == UInt8(ascii: "{") || first == UInt8(ascii: "[")
        let isString = first == UInt8(ascii: "\"")
        var depth = 0
        var inString = false
        var escaped = false
        var scan = position
        while true {
            while scan < buffer.count {
                let byte = buffer[scan]
                if !isContainer, !isString {
                    // A number or a literal ends at the next separator or space.
                    if [UInt8(ascii: ","), UInt8(ascii: "]"), UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t")].contains(byte) {
                        return take(upTo: scan)
                    }
                    scan += 1
                    continue
                }
                scan += 1
                if inString {
                    if escaped {
                        escaped = false
                    } else if byte == UInt8(ascii: "\\") {
                        escaped = true
                    } else if byte == UInt8(ascii: "\"") {
                        inString = false
                        if isString { return take(upTo: scan) }
                    }
                    continue
                }
                switch byte {
                case UInt8(ascii: "\""): inString = true
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 { return take(upTo: scan) }
                default: break
                }
            }
            let scanned = scan - position
            guard try readMore() else {
                if !isContainer, !isString { return take(upTo: buffer.count) }
                throw invalid("the file ends inside entry \(entriesRead)")
            }
            scan = position + scanned
        }
    }

    private func take(upTo end: Int) -> [UInt8] {
        let element = Array(buffer[position..<end])
        position = end
        return element
    }

    private func decode(_ element: [UInt8]) throws(ResponseError) -> ImportEntry {
        let index = entriesRead
        entriesRead += 1
        guard String(validating: element, as: UTF8.self) != nil else {
            throw .importInvalid("entry is not UTF-8 text", index: index, path: path)
        }
        do {
            return try JSONDecoder().decode(ImportEntry.self, from: Data(element))
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
                switch buffer[position] {
                case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"): position += 1
                default: return buffer[position]
                }
            }
            guard try readMore() else { return nil }
        }
    }

    /// Appends the next chunk of the file, dropping what was consumed; false at the end of the file.
    private func readMore() throws(ResponseError) -> Bool {
        guard !atEnd else { return false }
        let chunk: Data?
        do {
            chunk = try handle.read(upToCount: chunkSize)
        } catch {
            throw .importInvalid("cannot read the file: \((error as NSError).localizedDescription)", path: path)
        }
        guard let chunk, !chunk.isEmpty else {
            atEnd = true
            return false
        }
        buffer.removeFirst(position)
        position = 0
        buffer.append(contentsOf: chunk)
        bytesRead += chunk.count
        return true
    }

    private func invalid(_ reason: String) -> ResponseError {
        .importInvalid(reason, path: path)
    }
}
