import Synchronization

/// How the route of `GET /v1/live` hands its stream to the connection it answers on, when that
/// connection is served on its pipeline (``LiveConnectionHandler``) rather than by a task: the
/// handler sets ``current`` while the router answers, the route leaves its ``LiveStream`` here, and
/// its response's body only opens the stream. Without one (tests through the router, a live stream
/// on a connection that served other requests first) the stream's task writes it all.
final class LiveHandoff: Sendable {
    @TaskLocal static var current: LiveHandoff?

    private let handed = Mutex<LiveStream?>(nil)

    /// The route's stream, once it answered with one.
    var stream: LiveStream? { handed.withLock { $0 } }

    /// Takes the route's stream; the caller's response body then only opens it.
    func take(_ stream: LiveStream) { handed.withLock { $0 = stream } }
}
