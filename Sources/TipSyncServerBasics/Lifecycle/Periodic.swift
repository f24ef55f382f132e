import ServiceLifecycle

/// The loop every periodic service of the server runs, written once: `work` every `interval` until
/// the service group shuts down gracefully or the task is cancelled (then the wait ends at once and
/// `work` is not called again).
package enum Periodic {
    /// - Parameter immediately: run `work` once before the first wait (else after it).
    package static func run(
        every interval: Duration, immediately: Bool = false, _ work: @escaping @Sendable () async -> Void
    )
        async
    {
        try? await cancelWhenGracefulShutdown {
            if immediately { await work() }
            while !Task.isCancelled {
                try await Task.sleep(for: interval)
                await work()
            }
        }
    }
}
