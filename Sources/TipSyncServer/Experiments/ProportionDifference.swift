import Foundation

/// The difference of two proportions with a 95% interval: Newcombe's hybrid score interval (his
/// "method 10", 1998), built from each arm's Wilson score interval. Unlike the textbook Wald interval
/// it keeps its coverage with small counts and rates near 0 — where tips live (a few percent
/// converting) — and never leaves [-1, 1]. `BENCHMARKS.md` ("Experiments: the statistics, simulated")
/// records its coverage in seeded simulations.
public struct ProportionDifference: Sendable, Hashable, Codable {
    /// `treatment − holdout`, as a proportion (0.02 is two percentage points).
    public var estimate: Double
    public var lower: Double
    public var upper: Double

    /// The two-sided 95% normal quantile.
    public static let z95 = 1.959_963_984_540_054

    /// Whether the interval excludes 0: a difference at the 5% level.
    public var isSignificant: Bool { lower > 0 || upper < 0 }

    /// `x1 / n1 − x2 / n2` with its interval; `nil` when either arm is empty.
    public init?(successes x1: Int, of n1: Int, minus x2: Int, of n2: Int, z: Double = Self.z95) {
        guard n1 > 0, n2 > 0 else { return nil }
        let p1 = Double(x1) / Double(n1)
        let p2 = Double(x2) / Double(n2)
        let (l1, u1) = Self.wilson(x1, n1, z: z)
        let (l2, u2) = Self.wilson(x2, n2, z: z)
        estimate = p1 - p2
        lower = estimate - ((p1 - l1) * (p1 - l1) + (u2 - p2) * (u2 - p2)).squareRoot()
        upper = estimate + ((u1 - p1) * (u1 - p1) + (p2 - l2) * (p2 - l2)).squareRoot()
    }

    /// Wilson's score interval for `x` successes of `n`.
    public static func wilson(_ x: Int, _ n: Int, z: Double = z95) -> (lower: Double, upper: Double) {
        let n = Double(n)
        let p = Double(x) / n
        let z2 = z * z
        let denominator = 1 + z2 / n
        let center = (p + z2 / (2 * n)) / denominator
        let half = z / denominator * (p * (1 - p) / n + z2 / (4 * n * n)).squareRoot()
        return (max(0, center - half), min(1, center + half))
    }
}
