import TipSyncCore

/// A store that takes a push without a Swift task: the push joins the writer's next group and
/// its answer is called on the writer's thread once that group has committed (or failed). Pushes
/// answered on their connection's event loop (``PushFastPath``) use it; the same write as
/// ``SyncStore/push(_:from:confirming:)``, whose ``PushOutcome/generation`` it always sets.
protocol PushesWithoutTask: Sendable {
    func push(
        _ changes: [Change], from identity: DeviceIdentity, confirming token: UnconfirmedToken?,
        then completion: @escaping @Sendable (Result<PushOutcome, any Error>) -> Void)
}
