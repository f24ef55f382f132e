import TipSyncServerBasics

/// Issuing credentials, the same on every backend: a random secret returned once, only its hash
/// stored (``TokenHasher``). Backends store (``IdentityStore/insertToken(hash:accountName:device:at:)``,
/// ``IdentityStore/insertAdminKey(hash:name:at:)``); what is issued and what an operator is told
/// when it cannot be is written here.
package struct CredentialIssuance: Sendable {
    /// Where credentials' hashes are kept: the only port issuing needs.
    package let store: any IdentityStore

    package init(_ store: any IdentityStore) {
        self.store = store
    }

    /// Creates a device (if new) in the named account and a new token for it. Returns the token.
    package func createToken(accountName: String, device: String) async throws -> String {
        let token = TokenHasher.makeToken()
        guard
            try await store.insertToken(
                hash: TokenHasher.hash(token), accountName: accountName, device: device, at: WallClock.milliseconds())
        else {
            throw StoreError("no account named '\(accountName)'; create it with 'tipsync-server accounts create'")
        }
        return token
    }

    /// Creates an admin key (`tsa_…`), returned once; only its hash is stored. The name defaults to
    /// the key's first 12 characters.
    package func createAdminKey(name: String?, at now: Int64) async throws -> (name: String, key: String) {
        let key = TokenHasher.makeToken(prefix: "tsa_")
        let name = name ?? String(key.prefix(12))
        guard try await store.insertAdminKey(hash: TokenHasher.hash(key), name: name, at: now) else {
            throw StoreError("an admin key named '\(name)' already exists")
        }
        return (name, key)
    }
}
