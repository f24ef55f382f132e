/// Who is calling: the account and device a bearer token belongs to.
///
/// Device names are compared as Unicode scalars, never by canonical equivalence (protocol.md
/// section 1): `café` in NFC and in NFD are two devices, here as in the database.
package struct DeviceIdentity: Sendable, Hashable {
    package var accountID: Int64
    package var device: String

    package init(accountID: Int64, device: String) {
        self.accountID = accountID
        self.device = device
    }

    package static func == (lhs: DeviceIdentity, rhs: DeviceIdentity) -> Bool {
        lhs.accountID == rhs.accountID && lhs.device.utf8.elementsEqual(rhs.device.utf8)
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(accountID)
        hasher.combine(device.utf8.count)
        for byte in device.utf8 { hasher.combine(byte) }
    }
}
