import Foundation

/// A PostgreSQL database's address as the server's `--database` setting gives it:
/// `postgres://user:password@host:5432/database[?sslmode=disable|prefer|require]`. Read here, where
/// no database library is, so a malformed setting fails when the configuration is read, with what
/// to write instead; the PostgreSQL backend builds its connection pool from it.
package struct PostgresURL: Sendable, Hashable {
    /// Whether the connection is encrypted (`sslmode`, as libpq spells it; default `disable`).
    package enum TLSMode: String, Sendable, Hashable {
        case disable, prefer, require
    }

    package var host: String
    package var port: Int
    package var username: String
    package var password: String?
    /// `nil`: the server's default database for the user.
    package var database: String?
    package var tls: TLSMode

    /// - Throws: ``StoreError`` naming what is wrong: no host, or an `sslmode` PostgreSQL clients do not know.
    package init(_ text: String) throws {
        guard let components = URLComponents(string: text), let host = components.host, !host.isEmpty else {
            throw StoreError(
                "cannot read the database URL '\(text)'; expected postgres://user:password@host:5432/database")
        }
        let database = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        let sslmode = components.queryItems?.first { $0.name == "sslmode" }?.value ?? "disable"
        guard let tls = TLSMode(rawValue: sslmode) else {
            throw StoreError("sslmode must be disable, prefer or require, got '\(sslmode)'")
        }
        self.host = host
        self.port = components.port ?? 5432
        self.username = components.user ?? "postgres"
        self.password = components.password
        self.database = database.isEmpty ? nil : database
        self.tls = tls
    }
}
