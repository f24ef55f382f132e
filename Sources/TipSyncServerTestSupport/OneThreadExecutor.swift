import Foundation
import Synchronization

/// A task executor with exactly one thread: tests use it to stand for Swift's cooperative pool when
/// every one of its threads is busy, deterministically (the real pool has one thread per core).
package final class OneThreadExecutor: TaskExecutor, Sendable {
    private let jobs = Mutex<[UnownedJob]>([])
    private let ready = DispatchSemaphore(value: 0)
    private let stopped = Atomic<Bool>(false)

    package init() {
        Thread.detachNewThread { [self] in
            while true {
                ready.wait()
                if stopped.load(ordering: .acquiring) { return }
                let job = jobs.withLock { $0.removeFirst() }
                job.runSynchronously(on: asUnownedTaskExecutor())
            }
        }
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        jobs.withLock { $0.append(job) }
        ready.signal()
    }

    /// Ends the thread at its next wake-up; jobs still queued then never run (call it when done).
    package func shutdown() {
        stopped.store(true, ordering: .releasing)
        ready.signal()
    }
}
