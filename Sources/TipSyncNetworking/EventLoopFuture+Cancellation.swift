package import NIOCore

extension EventLoopFuture where Value == Void {
    /// Returns when the future completes (with either result) or when the calling task is
    /// cancelled, whichever comes first. `get()` ignores cancellation, so a task group racing a
    /// connection's `closeFuture` against other events would otherwise wait for the close.
    package func completionOrCancellation() async {
        let (completed, continuation) = AsyncStream<Void>.makeStream()
        whenComplete { _ in continuation.finish() }
        for await _ in completed {}  // ends on completion, or at once on cancellation
    }
}
