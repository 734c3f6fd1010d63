import Crypto
import Foundation

// MARK: - Sealed files

/// A file's bytes sealed for an encrypted remote (protocol/sync.md, "Encryption"): age's STREAM
/// construction over ChaCha20-Poly1305, with a key of the file's own.
///
/// The file begins with `CNS1` and 16 random bytes, from which and the remote's data key HKDF-SHA256
/// derives the file's key. The bytes follow in chunks of 64 KiB, each sealed with a nonce of an 11-byte
/// counter and a last-chunk flag, and the file's path as associated data: a chunk dropped, moved or cut
/// short, or a file moved to another path, fails to open.
enum SealedFile {
    static let magic = Data("CNS1".utf8)
    static let saltBytes = 16
    static let chunkBytes = 64 * 1024
    static let tagBytes = 16
    static let fileKeyInfo = Data("cloudnotes-sync file key".utf8)

    /// `plaintext` sealed for `path` under `key`.
    static func seal(_ plaintext: Data, path: String, key: SymmetricKey) throws -> Data {
        let salt = RemoteEncryption.randomBytes(saltBytes)
        let fileKey = fileKey(key, salt: salt)
        let path = Data(path.utf8)
        var sealed = magic + salt
        sealed.reserveCapacity(sealed.count + plaintext.count + (plaintext.count / chunkBytes + 1) * tagBytes)
        var start = plaintext.startIndex
        var counter: UInt64 = 0
        repeat {
            let end = min(start + chunkBytes, plaintext.endIndex)
            let box = try ChaChaPoly.seal(plaintext[start..<end], using: fileKey,
                                          nonce: nonce(counter, last: end == plaintext.endIndex), authenticating: path)
            sealed += box.ciphertext
            sealed += box.tag
            start = end
            counter += 1
        } while start < plaintext.endIndex
        return sealed
    }

    /// The bytes `sealed` holds, or nil when it was not sealed for `path` under `key`, or was changed,
    /// cut short or lengthened since.
    static func open(_ sealed: Data, path: String, key: SymmetricKey) -> Data? {
        let header = magic.count + saltBytes
        guard sealed.count >= header + tagBytes, sealed.prefix(magic.count) == magic else { return nil }
        let fileKey = fileKey(key, salt: sealed[sealed.startIndex + magic.count ..< sealed.startIndex + header])
        let path = Data(path.utf8)
        var plaintext = Data()
        plaintext.reserveCapacity(sealed.count - header)
        var start = sealed.startIndex + header
        var counter: UInt64 = 0
        while start < sealed.endIndex {
            let end = min(start + chunkBytes + tagBytes, sealed.endIndex)
            let last = end == sealed.endIndex
            // Only a file's one chunk may be empty: a last chunk left empty is a file cut after a full one.
            guard end - start >= tagBytes, !(last && end - start == tagBytes && counter > 0),
                  let box = try? ChaChaPoly.SealedBox(nonce: nonce(counter, last: last),
                                                      ciphertext: sealed[start ..< end - tagBytes], tag: sealed[end - tagBytes ..< end]),
                  let chunk = try? ChaChaPoly.open(box, using: fileKey, authenticating: path)
            else { return nil }
            plaintext += chunk
            start = end
            counter += 1
        }
        return plaintext
    }

    private static func fileKey(_ key: SymmetricKey, salt: Data) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: key, salt: salt, info: fileKeyInfo, outputByteCount: 32)
    }

    /// The nonce of chunk `counter`: the counter in 11 bytes, big-endian, then 1 for the last chunk, else 0.
    private static func nonce(_ counter: UInt64, last: Bool) -> ChaChaPoly.Nonce {
        var bytes = [UInt8](repeating: 0, count: 12)
        for index in 0..<8 { bytes[10 - index] = UInt8(truncatingIfNeeded: counter >> (8 * index)) }
        bytes[11] = last ? 1 : 0
        return try! ChaChaPoly.Nonce(data: bytes)  // 12 bytes: never throws
    }
}
