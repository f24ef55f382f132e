import TipSyncNetworking

/// A live stream is written from its connection's pipeline (``LiveConnection``) through its
/// subscription's wake-ups.
extension LiveStream: PipelinedStream {
    func finish() { subscription.finish() }
    var wasEvicted: Bool { subscription.wasEvicted }
    func onTermination(_ action: @escaping @Sendable () -> Void) { subscription.onTermination(action) }
    func onWake(_ wake: @escaping @Sendable () -> Void) { subscription.onWake(wake) }
}
