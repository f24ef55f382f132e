package import Testing

/// ``waitUntil(_:sourceLocation:)`` for a condition that must ask over the network, usually a
/// server process of its own: fails after 60 s (20 s was not always enough for 40 connections to a
/// debug server beside the whole suite on two cores; a bound against hanging, not a timing claim).
package func eventually(_ condition: () async throws -> Bool, sourceLocation: SourceLocation = #_sourceLocation)
    async throws
{
    let deadline = ContinuousClock.now + .seconds(60)
    while try await !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("condition not reached within 60 s", sourceLocation: sourceLocation)
            return
        }
        try await Task.sleep(for: .milliseconds(20))
    }
}

/// Waits for a condition by yielding (never sleeping for a guessed time); fails after 20 s.
package func waitUntil(_ condition: () -> Bool, sourceLocation: SourceLocation = #_sourceLocation) async throws {
    let deadline = ContinuousClock.now + .seconds(20)
    while !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("condition not reached within 20 s", sourceLocation: sourceLocation)
            return
        }
        try await Task.sleep(for: .milliseconds(5))
    }
}
