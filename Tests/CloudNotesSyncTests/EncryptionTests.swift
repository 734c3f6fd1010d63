import Crypto
import Foundation
import Testing

@testable import CloudNotesSync

/// Sealed files and the wrapped key of an encrypted remote (protocol/sync.md, "Encryption"): every
/// change to a sealed file's bytes or place fails to open it, and only the passphrase opens the key.
@Suite("Encryption")
struct EncryptionTests {
    let key = SymmetricKey(size: .bits256)
    let path = "devices/0123456789abcdef0123456789abcdef/segments/000000000001.jsonl"
    static let chunk = SealedFile.chunkBytes

    func bytes(_ count: Int) -> Data { Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }) }

    @Test("a file of any size opens to its bytes, in chunks of 64 KiB", arguments: [0, 1, chunk - 1, chunk, chunk + 1, 3 * chunk, 200_000])
    func roundTrip(size: Int) throws {
        let plain = bytes(size)
        let sealed = try SealedFile.seal(plain, path: path, key: key)
        let chunks = max(1, (size + Self.chunk - 1) / Self.chunk)
        #expect(sealed.count == 20 + size + 16 * chunks)
        #expect(SealedFile.open(sealed, path: path, key: key) == plain)
        // A fresh salt each time: the same bytes sealed twice differ.
        #expect(try SealedFile.seal(plain, path: path, key: key) != sealed)
    }

    @Test("a changed byte, another path, another key, or a file cut short or lengthened does not open")
    func tampering() throws {
        let sealed = try SealedFile.seal(bytes(2 * Self.chunk + 100), path: path, key: key)
        for index in [0, 4, 19, 20, 30_000, sealed.count - 1] {
            var changed = sealed
            changed[index] ^= 0x01
            #expect(SealedFile.open(changed, path: path, key: key) == nil, "byte \(index)")
        }
        #expect(SealedFile.open(sealed, path: path.replacingOccurrences(of: "01.jsonl", with: "02.jsonl"), key: key) == nil)
        #expect(SealedFile.open(sealed, path: path, key: SymmetricKey(size: .bits256)) == nil)
        let piece = Self.chunk + 16
        // Cut after a whole chunk (its flag says it is not the last), or inside one, or lengthened.
        for length in [20 + piece, 20 + 2 * piece, sealed.count - 1, 20 + 15, 0] {
            #expect(SealedFile.open(sealed.prefix(length), path: path, key: key) == nil, "cut to \(length)")
        }
        #expect(SealedFile.open(sealed + Data([0]), path: path, key: key) == nil)
        #expect(SealedFile.open(sealed + sealed.suffix(16), path: path, key: key) == nil)
    }

    @Test("chunks swapped, or a chunk repeated, do not open")
    func reordering() throws {
        let sealed = try SealedFile.seal(bytes(3 * Self.chunk), path: path, key: key)
        let piece = Self.chunk + 16
        let header = sealed.prefix(20)
        let pieces = (0..<3).map { sealed[(20 + $0 * piece)..<(20 + ($0 + 1) * piece)] }
        #expect(SealedFile.open(header + pieces[1] + pieces[0] + pieces[2], path: path, key: key) == nil)
        #expect(SealedFile.open(header + pieces[0] + pieces[0] + pieces[2], path: path, key: key) == nil)
        #expect(SealedFile.open(header + pieces[0] + pieces[1] + pieces[2], path: path, key: key) != nil)
    }

    @Test("the passphrase alone unwraps the key; a new one wraps the same key, and the old one then fails")
    func wrappedKey() throws {
        let passphrase = try #require(Passphrase("correct horse battery staple"))
        let (encryption, created) = try RemoteEncryption.create(passphrase: passphrase)
        #expect(encryption.isReadable)
        #expect(try encryption.unwrap(with: passphrase).withUnsafeBytes { Data($0) } == created.withUnsafeBytes { Data($0) })
        #expect(throws: SyncError.self) { try encryption.unwrap(with: try #require(Passphrase("correct horse battery stapler"))) }
        let newPassphrase = try #require(Passphrase("a new one"))
        let rewrapped = try RemoteEncryption.wrapping(created, with: newPassphrase)
        #expect(rewrapped.keyID == encryption.keyID && rewrapped.kdf.salt != encryption.kdf.salt)
        #expect(RemoteEncryption.keyID(of: try rewrapped.unwrap(with: newPassphrase)) == encryption.keyID)
        do {
            _ = try rewrapped.unwrap(with: passphrase)
            Issue.record("the old passphrase opened the rewrapped key")
        } catch let error as SyncError {
            #expect(error.reason == "wrongPassphrase")
        }
        #expect(RemoteEncryption.keyID(of: SymmetricKey(size: .bits256)) != encryption.keyID)
        #expect("\(passphrase)" == "<passphrase>" && String(reflecting: passphrase) == "<passphrase>")
    }

    @Test("a marker asking scrypt for more than a reader allows is refused before any work")
    func boundedWork() throws {
        let passphrase = try #require(Passphrase("p"))
        var (encryption, _) = try RemoteEncryption.create(passphrase: passphrase)
        encryption.kdf.logN = RemoteEncryption.maximumLogN + 1
        #expect(!encryption.isReadable)
    }
}
