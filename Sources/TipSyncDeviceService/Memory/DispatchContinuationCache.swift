import Dispatch
import TipSyncServerBasics
import TipSyncStorage

/// Empties libdispatch's per-thread caches of job continuations after a burst.
///
/// Every job Swift's global executor runs goes through `dispatch_async_f`, which takes a 64-byte
/// continuation from the calling thread's cache or allocates one; the thread that runs the job puts
/// it in *its* cache. Event loops resume request tasks on every read and the heartbeat resumes every
/// live stream at once, so under load the cooperative threads' caches fill with continuations
/// allocated all over a heap the burst made large. On Linux a cache holds up to 65,536 and is freed
/// only when its thread exits, and the server's periodic work keeps its threads alive: after a burst
/// these few kilobytes pin megabytes of pages that `malloc_trim` cannot return (docs/benchmark-history.md,
/// "Load … (issue 11)": 1,218 pinned pages after one round, 765 of them by continuations).
///
/// ``drain(tasks:perTask:chunk:)`` makes the cooperative threads spend their caches on empty
/// blocks for ``sink``, a serial queue at background QoS: nothing else runs at that QoS, so its
/// worker thread, which keeps what it frees, goes idle and exits after libdispatch's idle timeout
/// (5 s), freeing them for good. ``MemoryRelease`` trims once ``workerExit`` has passed.
package enum DispatchContinuationCache {
    /// Where the drained continuations end up; its worker thread runs nothing else.
    static let sink = DispatchQueue(label: "tipsync.memory-release.continuations", qos: .background)

    /// How long after a drain the sink's worker thread has exited: libdispatch's pool threads
    /// exit after 5 s without work.
    static let workerExit = Duration.seconds(6)

    /// Runs `tasks` tasks on the global executor, each sending `perTask` empty blocks to ``sink``
    /// in chunks of `chunk`, waiting for each chunk to run before the next (so no more than a chunk
    /// per task is ever queued). Returns the number of blocks run.
    package static func drain(tasks: Int, perTask: Int, chunk: Int = 1000) async -> Int {
        let chunk = max(1, chunk)
        return await withTaskGroup(of: Int.self) { group in
            for _ in 0..<max(0, tasks) {
                group.addTask {
                    var sent = 0
                    while sent < perTask {
                        let count = min(chunk, perTask - sent)
                        for _ in 0..<count { sink.async {} }
                        // Serial: this runs after the chunk has.
                        await withCheckedContinuation { done in sink.async { done.resume() } }
                        sent += count
                    }
                    return sent
                }
            }
            return await group.reduce(0, +)
        }
    }
}
