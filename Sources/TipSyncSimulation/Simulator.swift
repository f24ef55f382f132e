public import Foundation
@_spi(Simulation) import TipSync

/// Generates a history per seed, replays it and, on failure, shrinks it and writes it to a file.
public struct Simulator: Sendable {
    public var generator: HistoryGenerator
    public var replayer: Replayer
    /// Where shrunk failures are written (`nil`: not written).
    public var failureDirectory: URL?

    public init(generator: HistoryGenerator, replayer: Replayer = Replayer(), failureDirectory: URL? = nil) {
        self.generator = generator
        self.replayer = replayer
        self.failureDirectory = failureDirectory
    }

    public struct Failure: Sendable {
        public var seed: UInt64
        public var violations: [String]
        public var shrunk: History
        public var file: URL?
        public var diverged: Bool { violations.contains { $0.hasPrefix("convergence") } }
    }

    public struct Summary: Sendable, CustomStringConvertible {
        public var seeds = 0
        public var failures: [Failure] = []
        public var diverged: Int { failures.filter(\.diverged).count }
        public var violations: Int { failures.reduce(0) { $0 + $1.violations.count } }

        public var description: String {
            "seeds: \(seeds), diverged: \(diverged), invariant violations: \(violations)"
        }
    }

    /// Runs `count` seeds from `first`; `progress` hears about each failure as it is found.
    public func run(
        seeds count: Int, from first: UInt64, shrink: Bool = true, progress: (Failure) -> Void = { _ in }
    ) async throws -> Summary {
        var summary = Summary()
        for seed in first..<(first + UInt64(count)) {
            let history = generator.history(seed: seed)
            let outcome = try await replayer.replay(history)
            summary.seeds += 1
            guard !outcome.passed else { continue }
            var shrunk = shrink ? try await Shrinker(replayer: replayer).shrink(history) : history
            shrunk.description = "shrunk from seed \(seed): " + (try await replayer.replay(shrunk)).violations.first!
            var file: URL?
            if let failureDirectory {
                try FileManager.default.createDirectory(at: failureDirectory, withIntermediateDirectories: true)
                file = failureDirectory.appendingPathComponent("failure-seed-\(seed).json")
                try Data(shrunk.json().utf8).write(to: file!)
            }
            let failure = Failure(seed: seed, violations: outcome.violations, shrunk: shrunk, file: file)
            summary.failures.append(failure)
            progress(failure)
        }
        return summary
    }
}
