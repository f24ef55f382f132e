import Synchronization

/// How a route that answers with a stream hands it to the connection it answers on, when that
/// connection is served on its pipeline (``LiveConnectionHandler``) rather than by a task: the
/// handler sets ``current`` while the router answers, the route leaves its stream here, and its
/// response's body only opens the stream. Without one (tests through the router, a live stream on a
/// connection that served other requests first) the stream's task writes it all.
package final class LiveHandoff: Sendable {
    @TaskLocal package static var current: LiveHandoff?

    private let handed = Mutex<(any PipelinedStream)?>(nil)

    package init() {}

    /// The route's stream, once it answered with one.
    var stream: (any PipelinedStream)? { handed.withLock { $0 } }

    /// Takes the route's stream; the caller's response body then only opens it.
    package func take(_ stream: any PipelinedStream) { handed.withLock { $0 = stream } }
}
