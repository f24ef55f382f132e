/// One console login session as the database keeps it (table `console_session`): the SHA-256 of
/// its id (the cookie's value is never stored), the admin key that opened it, its CSRF token and
/// when it expires.
public struct ConsoleSessionRecord: Sendable, Hashable {
    public var idHash: String
    public var adminKeyHash: String
    public var adminKeyName: String
    public var csrf: String
    public var expiresAt: Int64

    public init(idHash: String, adminKeyHash: String, adminKeyName: String, csrf: String, expiresAt: Int64) {
        self.idHash = idHash
        self.adminKeyHash = adminKeyHash
        self.adminKeyName = adminKeyName
        self.csrf = csrf
        self.expiresAt = expiresAt
    }
}
