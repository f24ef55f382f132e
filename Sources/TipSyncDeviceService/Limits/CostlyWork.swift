import NIOCore
import NIOPosix
import Synchronization
import TipSyncServerBasics
import TipSyncStorage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A lane of its own, on threads the operating system schedules last, for work whose cost a device
/// chooses: inflating, parsing and checking a large push body. Issue 59: one device re-sending a 4 KB
/// gzip body that inflates to a 4 MB push (≈ 0.3 s of CPU each) on the threads that serve every
/// other request moved other devices' p99 from 3 ms to 90 ms; the budgets bound how often a device
/// may do it, not how long each one holds a shared thread.
///
/// The lane's one thread runs at the lowest priority (nice 19 on Linux, background QoS on Darwin):
/// while other requests want the CPU they run first, and the costly request finishes in what is left
/// (nice 19 still has a share when the machine is saturated: beside two CPU-bound processes on two
/// cores, the 4 MB push took 9–21 s, a 1,000-change push 19 ms). Small bodies — nearly every push,
/// compressed or not — are not worth the trip and run where they arrive.
package final class CostlyWork: Sendable {
    /// Bodies that decode to more than this (64 KiB) go to the lane: a 1,000-change push is ≈ 120 KB,
    /// a device's everyday push a few hundred bytes. A compressed body is inflated up to this where it
    /// arrives (a fraction of a millisecond) and, if it goes beyond, from the start in the lane.
    package static let threshold = 64 * 1024

    /// The lane every server of this process shares: one thread, however many servers a test builds.
    package static let shared = CostlyWork()

    private let pool: NIOThreadPool
    private let lowestPriority: Bool
    private let runs = Atomic<Int>(0)

    /// How many pieces of work this lane has been given (tests: which requests came here).
    package var runCount: Int { runs.load(ordering: .relaxed) }

    /// A lane with its own thread (tests build one to hold it busy). `lowestPriority: false` leaves
    /// the thread at the process's priority: for a test whose subject is not the lane's priority, in a
    /// test process that keeps every core busy for minutes (the lowest priority's share of that is
    /// a few percent).
    package init(lowestPriority: Bool = true) {
        self.lowestPriority = lowestPriority
        pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
    }

    deinit {
        pool.shutdownGracefully { _ in }
    }

    /// Runs `work` on the lane and returns what it returns (or throws what it throws).
    package func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        runs.add(1, ordering: .relaxed)
        // The lane's thread only runs the work: the result is handed to an event loop, which
        // resumes the caller, so nothing of the caller's runs or is started from the nice-19 thread.
        // (libdispatch on Linux sets its own workers' nice values by QoS: 0 for default, -2 for
        // overcommit, 10 for background — seen with `ps -L -o ni`.)
        // The request gives its place up while the lane works (``RequestAdmission``): a device's costly
        // push must not keep other devices' requests waiting for their turn.
        let answer = pool.runIfActive(eventLoop: NIOSingletons.posixEventLoopGroup.any()) { [lowestPriority] in
            if lowestPriority { Self.lowerThisThreadsPriority() }
            return try work()
        }
        return try await RequestAdmission.stepAside { () async throws -> T in try await answer.get() }
    }

    /// The calling thread — only it, not the process — to the lowest priority. Idempotent.
    private static func lowerThisThreadsPriority() {
        #if os(Linux)
            // Linux keeps a nice value per thread, and `who == 0` names the calling thread (setpriority(2),
            // "Bugs"). Nice 19, not SCHED_IDLE: an idle-class thread waited 100 s for one 4 MB push while
            // a profiler kept the machine busy; at nice 19 it still gets its small share.
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19)
        #elseif canImport(Darwin)
            _ = pthread_set_qos_class_self_np(QOS_CLASS_BACKGROUND, 0)
        #endif
    }
}
