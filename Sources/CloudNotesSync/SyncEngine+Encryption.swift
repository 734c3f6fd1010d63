import CloudNotesStore
import Crypto
import Foundation

// MARK: - Encrypted remotes

extension SyncEngine {
    /// The remote's marker, read and checked: nil when there is none yet (a new remote). Refuses a file
    /// that is not a CloudNotes marker, and a version this one cannot read.
    func readMarker() async throws -> RemoteMarker? {
        guard let data = try await remote.read(RemoteLayout.markerPath) else { return nil }
        guard let marker = try? JSONDecoder().decode(RemoteMarker.self, from: data), marker.format == RemoteMarker.formatName else {
            throw SyncError.corruptRemote("\(RemoteLayout.markerPath) is not a CloudNotes remote's marker")
        }
        guard marker.version <= RemoteMarker.encryptedVersion else {
            throw SyncError.corruptRemote("the remote is in format \(marker.version), written by a newer CloudNotes; upgrade cloudnotes")
        }
        guard (marker.version == RemoteMarker.encryptedVersion) == (marker.encryption != nil),
              marker.encryption?.isReadable ?? true
        else { throw SyncError.corruptRemote("\(RemoteLayout.markerPath) describes an encryption this version cannot read") }
        return marker
    }

    /// This engine with the remote it syncs through: the remote itself, or, when it is encrypted, the
    /// remote sealed with its data key; and the marker found (or made, for a new encrypted remote).
    ///
    /// The key comes from the store, or once from a passphrase (`passphrase`), after which the store
    /// keeps it. Every refusal comes before anything is written, here or on the remote.
    func unlocked() async throws -> (engine: SyncEngine, marker: RemoteMarker?) {
        let marker = try await readMarker()
        let state = try store.syncState()
        guard let url = state.remote else { throw SyncError.notConfigured }
        let held = try store.syncKey().map { SymmetricKey(data: $0) }
        var engine = self
        switch (marker, marker?.encryption) {
        case (nil, _):
            if held != nil {
                throw SyncError.remoteLostHistory("""
                    the encrypted remote \(remote.displayURL) has lost its \(RemoteLayout.markerPath) (is it empty, \
                    unmounted, or another remote?); nothing was changed
                    """)
            }
            guard state.encrypt else { return (self, nil) }
            guard state.published == 0 else { throw publishedInPlainText }
            let (encryption, key) = try RemoteEncryption.create(passphrase: try await needPassphrase(.create))
            let made = RemoteMarker.encrypted(encryption)
            // The marker first: a store that kept a key no marker holds would refuse the remote.
            try await remote.write(RemoteLayout.markerPath, try made.encoded())
            try keep(key, for: url)
            engine.remote = EncryptedRemote(base: remote, key: key)
            return (engine, made)
        case (.some, nil):
            if held != nil {
                throw SyncError.encryptionMismatch("""
                    this store syncs with \(remote.displayURL) encrypted, but the remote now says it is in plain text \
                    (was it replaced?); nothing was sent
                    """)
            }
            if state.encrypt {
                throw SyncError.encryptionMismatch("""
                    \(remote.displayURL) holds memos in plain text, so it cannot be made encrypted; to encrypt, set a \
                    new, empty remote with --encrypt; nothing was changed
                    """)
            }
            return (self, marker)
        case (.some, let encryption?):
            if let held {
                guard RemoteEncryption.keyID(of: held) == encryption.keyID else {
                    throw SyncError.encryptionMismatch("""
                        the encrypted remote \(remote.displayURL) has a key other than the one this store holds (was it \
                        made anew?); to sync with it, run: cloudnotes sync --remote \(remote.displayURL) --republish
                        """)
                }
                engine.remote = EncryptedRemote(base: remote, key: held)
                return (engine, marker)
            }
            guard state.published == 0 else { throw publishedInPlainText }
            let key = try encryption.unwrap(with: try await needPassphrase(.unlock))
            try keep(key, for: url)
            engine.remote = EncryptedRemote(base: remote, key: key)
            return (engine, marker)
        }
    }

    /// Wraps the remote's data key with a new passphrase (`cloudnotes sync --change-passphrase`): only the
    /// marker is written. Devices that hold the key keep syncing; the old passphrase opens nothing.
    public func changePassphrase() async throws {
        let lock = try await SyncLock.acquire(for: store.path)
        defer { withExtendedLifetime(lock) {} }
        guard let encryption = try await readMarker()?.encryption else {
            throw SyncError.encryptionMismatch("\(remote.displayURL) is not encrypted: it has no passphrase to change")
        }
        guard let key = try store.syncKey().map({ SymmetricKey(data: $0) }) else {
            throw SyncError.passphraseRequired("""
                this store has not opened \(remote.displayURL) yet: sync once with its passphrase, then change it
                """)
        }
        guard RemoteEncryption.keyID(of: key) == encryption.keyID else {
            throw SyncError.encryptionMismatch("the encrypted remote \(remote.displayURL) has a key other than the one this store holds")
        }
        guard let new = await passphrase(.change) else {
            throw SyncError.passphraseRequired("no new passphrase was given (CLOUDNOTES_NEW_PASSPHRASE, or the prompt on a terminal)")
        }
        let rewrapped = try RemoteEncryption.wrapping(key, with: new)
        try await remote.write(RemoteLayout.markerPath, try RemoteMarker.encrypted(rewrapped).encoded())
        logger.notice("the encrypted remote's passphrase was changed")
    }

    private func needPassphrase(_ purpose: PassphrasePurpose) async throws -> Passphrase {
        guard let passphrase = await passphrase(purpose) else {
            throw SyncError.passphraseRequired("""
                \(remote.displayURL) \(purpose == .create ? "is to be encrypted" : "is encrypted, and this store holds no key for it"): \
                give its passphrase (CLOUDNOTES_PASSPHRASE, the prompt on a terminal, or sync/configure's passphrase); \
                nothing was changed
                """)
        }
        return passphrase
    }

    private func keep(_ key: SymmetricKey, for url: String) throws {
        guard try store.setSyncKey(key.withUnsafeBytes { Data($0) }, forRemote: url) else { throw Self.remoteChanged }
    }

    private var publishedInPlainText: SyncError {
        .encryptionMismatch("""
            this store published its memos on \(remote.displayURL) in plain text, and the remote is encrypted \
            now, or is to be; to publish them there encrypted, run: cloudnotes sync --remote \(remote.displayURL) \
            --republish
            """)
    }
}
