package import TipSyncServerBasics

/// What ``SyncStore/signIn(accountName:device:issuedAt:at:)`` decided.
package enum SignInResult: Sendable, Hashable {
    case identity(DeviceIdentity)
    /// The account was erased after the credential was issued.
    case erased
    /// The device's tokens were revoked after the credential was issued.
    case revoked

    /// The sign-in rule, written once for every backend (protocol.md §6): a credential issued at or
    /// before the account's erasure is refused as erased, one issued at or before the device's
    /// revocation as revoked (a credential without an issue time counts as issued before both);
    /// otherwise it names `identity`. `nil` when the account or device does not exist yet (the
    /// backend creates them and signs in again).
    package static func decide(identity: DeviceIdentity?, revokedAt: Int64?, erasedAt: Int64?, issuedAt: Int64?)
        -> SignInResult?
    {
        let issued = issuedAt ?? .min
        if let erasedAt, issued <= erasedAt { return .erased }
        guard let identity else { return nil }
        if let revokedAt, issued <= revokedAt { return .revoked }
        return .identity(identity)
    }
}
