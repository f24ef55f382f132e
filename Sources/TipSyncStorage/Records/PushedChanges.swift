package import TipSyncCore

/// A push's changes as the store receives them: each with the canonical JSON it is stored as,
/// encoded once, where the push's other costly work is done (``CostlyWork`` for a large body) and
/// never under a backend's write lock.
package struct PushedChanges: Sendable {
    /// The changes, in the push's order.
    package let changes: [Change]
    /// Each change's canonical JSON (``Change/canonicalJSON``), by index.
    package let bodies: [String]

    /// `changes`, each encoded as it is stored.
    package init(_ changes: [Change]) {
        self.changes = changes
        bodies = changes.map(\.canonicalJSON)
    }
}
