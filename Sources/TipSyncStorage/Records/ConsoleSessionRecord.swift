/// One console login session as the database keeps it (table `console_session`): the SHA-256 of
/// its id (the cookie's value is never stored), the admin key that opened it, its CSRF token and
/// when it expires.
package struct ConsoleSessionRecord: Sendable, Hashable {
    package var idHash: String
    package var adminKeyHash: String
    package var adminKeyName: String
    package var csrf: String
    package var expiresAt: Int64

    package init(idHash: String, adminKeyHash: String, adminKeyName: String, csrf: String, expiresAt: Int64) {
        self.idHash = idHash
        self.adminKeyHash = adminKeyHash
        self.adminKeyName = adminKeyName
        self.csrf = csrf
        self.expiresAt = expiresAt
    }
}
