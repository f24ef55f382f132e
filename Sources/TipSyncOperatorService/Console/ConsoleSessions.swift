import Crypto
import Foundation
import TipSyncDeviceService
import TipSyncServerBasics
package import TipSyncStorage

/// The console's login sessions, kept in the database so that every instance on it sees them: a
/// plain round-robin balancer and a restart keep operators logged in (issue 73, item 9: they lived
/// in one instance's memory). A session is a random id in an `HttpOnly`, `SameSite=Strict` cookie —
/// stored only as its SHA-256 — tied to the admin key that opened it, with its own CSRF token that
/// every form posts back. It ends on logout (on every instance at once), after `lifetime`, or when
/// its admin key is revoked (checked on every request).
package struct ConsoleSessions: Sendable {
    struct Session: Sendable {
        var adminKeyHash: String
        var adminKeyName: String
        var csrf: String
        var expiresAt: Int64
    }

    static let cookieName = "tipsync_console"
    let store: any IdentityStore
    let lifetimeMilliseconds: Int64

    package init(store: any IdentityStore, lifetimeMilliseconds: Int64 = 12 * 3_600_000) {
        self.store = store
        self.lifetimeMilliseconds = lifetimeMilliseconds
    }

    /// A new session; its id (the cookie's value) and the session.
    func open(adminKeyHash: String, name: String, now: Int64) async throws -> (id: String, session: Session) {
        let id = Self.randomToken()
        let session = Session(
            adminKeyHash: adminKeyHash, adminKeyName: name, csrf: Self.randomToken(),
            expiresAt: now + lifetimeMilliseconds)
        try await store.insertConsoleSession(
            ConsoleSessionRecord(
                idHash: TokenHasher.hash(id), adminKeyHash: adminKeyHash, adminKeyName: name, csrf: session.csrf,
                expiresAt: session.expiresAt),
            now: now)
        return (id, session)
    }

    /// The session of a cookie's id, unless it expired or ended.
    func session(_ id: String, now: Int64) async throws -> Session? {
        try await store.consoleSession(idHash: TokenHasher.hash(id), now: now).map {
            Session(
                adminKeyHash: $0.adminKeyHash, adminKeyName: $0.adminKeyName, csrf: $0.csrf, expiresAt: $0.expiresAt)
        }
    }

    func close(_ id: String) async throws {
        try await store.deleteConsoleSession(idHash: TokenHasher.hash(id))
    }

    static func randomToken() -> String {
        let bytes = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }
        return bytes.base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
