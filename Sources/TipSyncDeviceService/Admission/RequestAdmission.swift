package import CoreMetrics
import Synchronization

/// How many requests may run their middleware and route at once (``ServerConfiguration/requestsInFlight``);
/// the rest wait their turn, first come first served, holding nothing but their connection.
///
/// A request's middleware, authentication and route need some 26 KB of async frames, which Swift's
/// task allocator keeps until its task ends. When thousands of devices arrive in the same second (a
/// first launch, a restart's reconnect storm) nearly all of them wait on the store at once: with no
/// bound the server held ~12,000 such requests and 315 MB of frames at its peak, and `malloc` kept
/// the pages long after (BENCHMARKS.md, "Requests admitted a few hundred at a time"). The store
/// serves a handful at a time anyway, so a few hundred in flight keep it as busy, and the ones
/// waiting here cost a few hundred bytes each.
///
/// A request that waits for something other than the server's own work — a long-poll for news, a
/// refusal's delay, the low-priority lane — steps aside while it waits (``stepAside(_:)``), so
/// such waits never keep other devices out.
package final class RequestAdmission: Sendable {
    /// The admission the current task's request holds, while it runs in ``AdmittedResponder``.
    @TaskLocal package static var held: RequestAdmission?

    package let limit: Int
    private let waitingMeter: Meter?

    private struct State {
        var inFlight = 0
        var waiting: [CheckedContinuation<Void, Never>] = []
        /// Index of the first waiter not yet resumed (the array is a queue compacted now and then).
        var head = 0
    }
    private let state = Mutex(State())

    /// - Parameters:
    ///   - limit: requests admitted at once, at least 1.
    ///   - waiting: gauge of the requests waiting for admission (`tipsync_requests_waiting`).
    package init(limit: Int, waiting: Meter? = nil) {
        precondition(limit >= 1, "an admission limit is at least 1")
        self.limit = limit
        self.waitingMeter = waiting
    }

    /// Requests admitted and running now.
    package var inFlight: Int { state.withLock { $0.inFlight } }

    /// Requests waiting for admission now.
    package var waiting: Int { state.withLock { $0.waiting.count - $0.head } }

    /// Returns once the caller is admitted: at once while fewer than ``limit`` run, else after every
    /// request that waited before it. Every return is paired with one ``leave()``. Not cancellable: a
    /// request waiting here is admitted in its turn (a server shutting down lets its requests finish).
    package func enter() async {
        let admitted = state.withLock { state in
            guard state.inFlight >= limit else {
                state.inFlight += 1
                return true
            }
            return false
        }
        if admitted { return }
        await withCheckedContinuation { continuation in
            let admittedNow = state.withLock { state in
                // A leave between the check above and here may have made room.
                if state.inFlight < limit, state.head == state.waiting.count {
                    state.inFlight += 1
                    return true
                }
                state.waiting.append(continuation)
                return false
            }
            if admittedNow {
                continuation.resume()
            } else {
                waitingMeter?.increment()
            }
        }
    }

    /// The caller's request is done (or steps aside): its place goes to the request that waited
    /// longest, if any.
    package func leave() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard state.head < state.waiting.count else {
                state.inFlight -= 1
                return nil
            }
            // The place passes straight to the next request: `inFlight` stays.
            let next = state.waiting[state.head]
            state.head += 1
            if state.head == state.waiting.count {
                state.waiting.removeAll(keepingCapacity: state.waiting.count <= 1024)
                state.head = 0
            } else if state.head >= 1024, state.head * 2 >= state.waiting.count {
                state.waiting.removeFirst(state.head)
                state.head = 0
            }
            return next
        }
        if let next {
            waitingMeter?.decrement()
            next.resume()
        }
    }

    /// Runs `body` — a wait for something outside the server's own work — without holding the
    /// current request's place, and takes a place again (in turn) before returning. Outside an
    /// admitted request (a test calling a route directly, a background task) it only runs `body`.
    package static func stepAside<T, Failure: Error>(
        _ body: () async throws(Failure) -> T
    ) async throws(Failure) -> T {
        guard let admission = held else { return try await body() }
        admission.leave()
        let result: Result<T, Failure>
        do throws(Failure) {
            result = .success(try await body())
        } catch {
            result = .failure(error)
        }
        await admission.enter()
        return try result.get()
    }
}
