/// The suite's CPU-bound tests (generated histories, delivery-order permutations, shrinking,
/// simulated experiments) take their turns, one at a time.
///
/// Swift Testing starts every test at once, and Swift's cooperative pool has one thread per core:
/// on CI's two cores, two of these tests — minutes of synchronous merging in a debug build — could
/// hold both threads, and every in-process server's requests, every other test's awaits and the
/// child processes' CPU waited behind them (a `/health` closed unanswered at a 5 s head timeout,
/// a 20 s read timeout, a 60 s time limit, each passing alone). In turn they hold at most one
/// thread; the rest of the suite keeps the other.
public enum ComputeBoundTests {
    private static let turns = Turns()

    /// Runs `body` when no other CPU-bound test is running (first come, first served).
    public static func run<T>(_ body: () async throws -> T) async rethrows -> T {
        await turns.take()
        do {
            let value = try await body()
            await turns.give()
            return value
        } catch {
            await turns.give()
            throw error
        }
    }

    private actor Turns {
        private var taken = false
        private var waiting: [CheckedContinuation<Void, Never>] = []

        func take() async {
            guard taken else {
                taken = true
                return
            }
            await withCheckedContinuation { waiting.append($0) }
        }

        /// The next in line gets the turn as it is; nobody waiting, it is free.
        func give() {
            if waiting.isEmpty { taken = false } else { waiting.removeFirst().resume() }
        }
    }
}
