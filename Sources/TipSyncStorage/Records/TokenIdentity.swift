package import TipSyncServerBasics

/// A device token's hash and the device it names, as stored.
package struct TokenIdentity: Sendable, Equatable {
    package let hash: String
    package let identity: DeviceIdentity

    package init(hash: String, identity: DeviceIdentity) {
        self.hash = hash
        self.identity = identity
    }
}
