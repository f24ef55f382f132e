import Foundation
package import TipSyncCore
package import TipSyncServer
import TipSyncTestSupport

/// The storage protocol's contract, run against every backend: SQLite and a real PostgreSQL.
package enum Backend: String, CaseIterable, Sendable {
    case sqlite, postgres

    /// A fresh, migrated store for the duration of `body`.
    package func withStore<Result: Sendable>(_ body: (any SyncStore) async throws -> Result) async throws -> Result {
        try await DatabaseLocation(try await freshLocation()).withStore(body)
    }

    package func freshLocation() async throws -> String {
        switch self {
        case .sqlite:
            "sqlite:"
                + Scratch.path("tipsync-contract").appendingPathComponent("server.sqlite").path
        case .postgres: try await ThrowawayPostgres.freshDatabase()
        }
    }
}

package func parameterChanges(device: String, seqs: ClosedRange<Int64>, value: Int64 = 0) -> [Change] {
    seqs.map { seq in
        Change(
            device: device, seq: seq, hlc: HLC(milliseconds: 1_800_000_000_000 + UInt64(seq), counter: 0),
            operation: .parameter(id: "p-\(device)-\(seq % 7)", value: .int(value + seq)))
    }
}

/// A new account `name` with a token for its device `phone`.
package func phoneAccount(_ store: any SyncStore, _ name: String) async throws -> DeviceIdentity {
    let id = try await store.createAccount(name: name)
    _ = try await CredentialIssuance(store).createToken(accountName: name, device: "phone")
    return DeviceIdentity(accountID: id, device: "phone")
}
