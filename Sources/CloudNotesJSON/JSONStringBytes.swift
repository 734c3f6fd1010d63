import CBytes

// MARK: - Bytes that matter inside a JSON string

/// Finds the bytes a JSON string cannot hold as they are: `"`, `\` and control characters (below 0x20).
///
/// Memo texts are long runs of ordinary bytes, and both the reader (checking a request's syntax) and
/// the writer (escaping a reply) look for these few bytes in them. The search tests sixteen bytes a
/// step with the processor's vector instructions (`cbytes_first_special`, in C: Swift's SIMD types
/// compiled to five times the instructions of the eight-bytes-a-word search they were to replace).
package enum JSONStringBytes {
    /// The index of the first such byte in `bytes` at or after `start`, or `bytes.count` when there is none.
    package static func firstSpecial(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        guard let base = bytes.baseAddress, start < bytes.count else { return bytes.count }
        return cbytes_first_special(base, bytes.count, start)
    }
}
