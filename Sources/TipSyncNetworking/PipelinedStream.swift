package import Hummingbird
package import NIOCore

/// What a response stream must offer to be written from its connection's pipeline
/// (``LiveConnection``) instead of by a task: the server's live stream (`GET /v1/live`) is one. The
/// connection layer knows nothing of what the stream carries; it asks for the news since the last
/// wake-up, writes what is ready at once and awaits the rest.
package protocol PipelinedStream: AnyObject, Sendable {
    /// What woke the stream since the news was last taken.
    associatedtype News: Sendable

    /// The stream is served on a connection's pipeline (`true`) or by its response task.
    func opened(onPipeline: Bool)
    /// The stream's response ended.
    func closed()
    /// Ends the stream (the client left, the server shuts down, a write failed).
    func finish()
    /// Whether the stream ended because its device opened more streams than it may hold.
    var wasEvicted: Bool { get }
    /// Calls `action` once, when the stream ends (at once if it has ended).
    func onTermination(_ action: @escaping @Sendable () -> Void)
    /// Calls `wake` on every wake-up from now on, instead of a task reading them.
    func onWake(_ wake: @escaping @Sendable () -> Void)
    /// The news since the last call.
    func takeNews() -> News
    /// The bytes `news` calls for when they need no await (no store read), framed as HTTP/1.1 chunks
    /// (``HTTPChunk``: the connection writes them as they are), else `nil`. Empty: nothing to write.
    func immediate(_ news: News) -> ByteBuffer?
    /// Writes `news`, awaiting the store and the writer when it must.
    func write(_ news: News, to writer: inout any ResponseBodyWriter) async throws
}
