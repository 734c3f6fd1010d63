import Crypto
import Foundation
import _CryptoExtras

// MARK: - An encrypted remote's key

/// How an encrypted remote's data key is kept on it, in its marker (protocol/sync.md, "Encryption"):
/// wrapped with a key that scrypt derives from the passphrase, as age and restic keep theirs.
///
/// The data key seals every file (`SealedFile`) and never changes; a new passphrase wraps it anew, so
/// devices that hold it keep syncing and nothing else is rewritten.
struct RemoteEncryption: Codable, Equatable, Sendable {
    /// scrypt's parameters, recorded so that later versions can raise them.
    struct KeyDerivation: Codable, Equatable, Sendable {
        var name: String
        /// log2 of scrypt's N.
        var logN: Int
        var r: Int
        var p: Int
        /// Base64.
        var salt: String
    }

    /// The sealing of files: `chacha20poly1305-stream-64k`.
    var cipher: String
    var kdf: KeyDerivation
    /// Base64 of the 12-byte nonce, then the data key sealed with ChaCha20-Poly1305 (32 bytes and the tag).
    var key: String
    /// Names the data key without revealing it (`keyID(of:)`): a device that holds another key stops.
    var keyID: String

    static let cipherName = "chacha20poly1305-stream-64k"
    /// scrypt's work for a new passphrase: N = 2^17, r = 8, p = 1 (128 MiB; about half a second here).
    static let defaultKeyDerivation = (logN: 17, r: 8, p: 1)
    /// The most work a remote may ask of scrypt (with `r` up to 32 and `p` up to 16): past it, a remote
    /// could make every join take minutes.
    static let maximumLogN = 22
    static let wrapInfo = Data("cloudnotes-sync key".utf8)

    /// A new data key, and the marker's record of it wrapped with `passphrase`.
    static func create(passphrase: Passphrase) throws -> (RemoteEncryption, SymmetricKey) {
        let key = SymmetricKey(size: .bits256)
        return (try wrapping(key, with: passphrase), key)
    }

    /// The record of `key` wrapped with `passphrase`, with a fresh salt.
    static func wrapping(_ key: SymmetricKey, with passphrase: Passphrase) throws -> RemoteEncryption {
        let (logN, r, p) = defaultKeyDerivation
        let kdf = KeyDerivation(name: "scrypt", logN: logN, r: r, p: p, salt: randomBytes(16).base64EncodedString())
        let wrapKey = try derive(passphrase, kdf)
        let sealed = try ChaChaPoly.seal(key.withUnsafeBytes { Data($0) }, using: wrapKey,
                                         nonce: ChaChaPoly.Nonce(), authenticating: wrapInfo)
        return RemoteEncryption(cipher: cipherName, kdf: kdf, key: sealed.combined.base64EncodedString(), keyID: keyID(of: key))
    }

    /// The data key, unwrapped with `passphrase`. Throws `wrongPassphrase` when it does not open it.
    func unwrap(with passphrase: Passphrase) throws -> SymmetricKey {
        guard let sealed = Data(base64Encoded: key), let box = try? ChaChaPoly.SealedBox(combined: sealed) else {
            throw SyncError.corruptRemote("the encrypted remote's key in \(RemoteLayout.markerPath) is unreadable")
        }
        let wrapKey = try Self.derive(passphrase, kdf)
        guard let opened = try? ChaChaPoly.open(box, using: wrapKey, authenticating: Self.wrapInfo), opened.count == 32 else {
            throw SyncError.wrongPassphrase("the passphrase does not open the encrypted remote; nothing was changed")
        }
        let key = SymmetricKey(data: opened)
        guard Self.keyID(of: key) == keyID else {
            throw SyncError.corruptRemote("the encrypted remote's key does not match its id in \(RemoteLayout.markerPath)")
        }
        return key
    }

    /// Whether this version can use the record: its cipher and key derivation, within bounds.
    var isReadable: Bool {
        cipher == Self.cipherName && kdf.name == "scrypt" && (10...Self.maximumLogN).contains(kdf.logN)
            && (1...32).contains(kdf.r) && (1...16).contains(kdf.p) && Data(base64Encoded: kdf.salt) != nil
    }

    /// 32 hex digits that name `key`: HMAC-SHA256 of `cloudnotes-sync key id` under it, cut to 16 bytes.
    static func keyID(of key: SymmetricKey) -> String {
        HMAC<SHA256>.authenticationCode(for: Data("cloudnotes-sync key id".utf8), using: key)
            .prefix(16).map { String(format: "%02x", $0) }.joined()
    }

    private static func derive(_ passphrase: Passphrase, _ kdf: KeyDerivation) throws -> SymmetricKey {
        guard let salt = Data(base64Encoded: kdf.salt) else {
            throw SyncError.corruptRemote("the encrypted remote's key in \(RemoteLayout.markerPath) is unreadable")
        }
        return try KDF.Scrypt.deriveKey(from: passphrase.bytes, salt: salt, outputByteCount: 32,
                                        rounds: 1 << kdf.logN, blockSize: kdf.r, parallelism: kdf.p)
    }

    /// `count` bytes from the system's random source.
    static func randomBytes(_ count: Int) -> Data {
        SymmetricKey(size: SymmetricKeySize(bitCount: count * 8)).withUnsafeBytes { Data($0) }
    }
}

// MARK: - Passphrases

/// A passphrase, kept out of every description: printing or logging one shows `<passphrase>`.
public struct Passphrase: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    let bytes: Data

    /// Nil for an empty passphrase, which would protect nothing.
    public init?(_ text: String) {
        guard !text.isEmpty else { return nil }
        bytes = Data(text.utf8)
    }

    public var description: String { "<passphrase>" }
    public var debugDescription: String { description }
}

/// What a passphrase is asked for.
public enum PassphrasePurpose: Sendable {
    /// To open a remote that is encrypted already (joining it).
    case unlock
    /// To encrypt a new remote (a person types it twice).
    case create
    /// The new passphrase of `cloudnotes sync --change-passphrase`.
    case change
}

/// Where a sync gets a passphrase when it needs one: nil when there is none to give.
public typealias PassphraseSource = @Sendable (PassphrasePurpose) async -> Passphrase?
