package import PostgresNIO
import TipSyncServerBasics
import TipSyncStorage

/// The device a token names, prepared once per connection (PostgresNIO names and caches it): after
/// a restart every device's first request reads its token here, all at once.
package struct PostgresTokenStatement: PostgresPreparedStatement {
    package static let name = "tipsync_token"
    package static let sql = "SELECT account, device FROM token WHERE hash = $1"
    package typealias Row = (account: Int64, device: String)

    package var hash: String

    package func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 1)
        bindings.append(hash)
        return bindings
    }

    package func decodeRow(_ row: PostgresRow) throws -> Row {
        let cells = row.makeRandomAccess()
        return (try cells[0].decode(Int64.self), try cells[1].decode(String.self))
    }
}
