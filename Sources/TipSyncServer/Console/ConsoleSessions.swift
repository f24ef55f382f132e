import Crypto
import Foundation
import Synchronization

/// The console's login sessions, kept in this instance's memory: a session is a random id in an
/// `HttpOnly`, `SameSite=Strict` cookie, tied to the admin key that opened it, with its own CSRF
/// token that every form posts back. A session ends on logout, after `lifetime`, when its admin
/// key is revoked (checked on every request), or when the server restarts.
final class ConsoleSessions: Sendable {
    struct Session: Sendable {
        var adminKeyHash: String
        var adminKeyName: String
        var csrf: String
        var expiresAt: Int64
    }

    static let cookieName = "tipsync_console"
    let lifetimeMilliseconds: Int64
    private let sessions = Mutex<[String: Session]>([:])

    init(lifetimeMilliseconds: Int64 = 12 * 3_600_000) {
        self.lifetimeMilliseconds = lifetimeMilliseconds
    }

    /// A new session; its id (the cookie's value) and the session.
    func open(adminKeyHash: String, name: String, now: Int64) -> (id: String, session: Session) {
        let id = Self.randomToken()
        let session = Session(
            adminKeyHash: adminKeyHash, adminKeyName: name, csrf: Self.randomToken(),
            expiresAt: now + lifetimeMilliseconds)
        sessions.withLock { all in
            all = all.filter { $0.value.expiresAt > now }  // forget expired ones as new ones open
            all[id] = session
        }
        return (id, session)
    }

    func session(_ id: String, now: Int64) -> Session? {
        sessions.withLock { all in
            guard let session = all[id] else { return nil }
            guard session.expiresAt > now else {
                all[id] = nil
                return nil
            }
            return session
        }
    }

    func close(_ id: String) {
        _ = sessions.withLock { $0.removeValue(forKey: id) }
    }

    static func randomToken() -> String {
        let bytes = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }
        return bytes.base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
