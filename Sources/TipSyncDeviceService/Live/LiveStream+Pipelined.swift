import TipSyncNetworking
import TipSyncServerBasics
import TipSyncStorage

/// A live stream is written from its connection's pipeline (``LiveConnection``) through its
/// subscription's wake-ups.
extension LiveStream: PipelinedStream {
    package func finish() { subscription.finish() }
    package var wasEvicted: Bool { subscription.wasEvicted }
    package func onTermination(_ action: @escaping @Sendable () -> Void) { subscription.onTermination(action) }
    package func onWake(_ wake: @escaping @Sendable () -> Void) { subscription.onWake(wake) }
}
