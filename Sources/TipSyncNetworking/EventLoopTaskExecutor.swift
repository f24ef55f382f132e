import NIOCore

/// Runs a connection's request task on the event loop that reads its connection.
///
/// Hummingbird serves a connection from a task on Swift's cooperative pool: every request the event
/// loop parses wakes a pool thread, and every answer goes back to the loop; a push that commits to
/// SQLite crossed three threads and back (BENCHMARKS.md, "The one-device single-change push,
/// profiled"). With this executor as the task's preference the request's middleware list and route
/// run on the loop that parsed it, as NIO's own handlers do, and only what leaves the loop (a
/// store's commit, a read on its reader pool) crosses threads.
final class EventLoopTaskExecutor: TaskExecutor {
    let eventLoop: any EventLoop

    init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute {
            job.runSynchronously(on: self.asUnownedTaskExecutor())
        }
    }
}
