#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: - Memo ids in bulk

/// New memo ids: random version 4 UUIDs in lowercase, drawn from the system's random source a batch at a time.
///
/// Foundation's `UUID()` on Linux opens, reads and closes `/dev/urandom` for every id, and its `uuidString`
/// formats through `snprintf`: in `perf record` of an import of 100,000 memos, the `openat` and `close`
/// calls alone were a tenth of the writing thread's samples. Here one call fills a whole chunk's bytes.
enum RandomMemoIDs {
    /// `count` new ids, each beginning with the byte `leadingByte` (two hex digits), the other 114 random
    /// bits drawn anew (see `MemoStore.insert` for why a chunk's ids share their first byte).
    static func make(count: Int, leadingByte: UInt8) -> [String] {
        guard count > 0 else { return [] }
        var random = [UInt8](repeating: 0, count: count * 16)
        fillRandom(&random)
        return random.withUnsafeBufferPointer { bytes in
            (0..<count).map { index in
                format(UnsafeBufferPointer(rebasing: bytes[index * 16 ..< index * 16 + 16]), leadingByte: leadingByte)
            }
        }
    }

    // MARK: Bytes and digits

    /// Fills `bytes` from the operating system's random source: `arc4random_buf`, which glibc (since
    /// 2.36) serves with one `getrandom` call, as Darwin does from its kernel's generator.
    private static func fillRandom(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            arc4random_buf(base, buffer.count)
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// The UUID text of 16 random bytes: the first replaced by `leadingByte`, and the version (4) and
    /// variant (RFC 9562's 10xx) bits set.
    private static func format(_ random: UnsafeBufferPointer<UInt8>, leadingByte: UInt8) -> String {
        String(unsafeUninitializedCapacity: 36) { text in
            var out = 0
            for index in 0..<16 {
                var byte = random[index]
                switch index {
                case 0: byte = leadingByte
                case 6: byte = (byte & 0x0F) | 0x40
                case 8: byte = (byte & 0x3F) | 0x80
                default: break
                }
                if index == 4 || index == 6 || index == 8 || index == 10 {
                    text[out] = UInt8(ascii: "-")
                    out += 1
                }
                text[out] = hexDigits[Int(byte >> 4)]
                text[out + 1] = hexDigits[Int(byte & 0x0F)]
                out += 2
            }
            return out
        }
    }
}
