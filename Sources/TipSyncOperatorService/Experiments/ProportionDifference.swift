import Foundation
import TipSyncDeviceService
import TipSyncServerBasics
import TipSyncStorage

/// The difference of two proportions with a 95% interval: Newcombe's hybrid score interval (his
/// "method 10", 1998), built from each arm's Wilson score interval. Unlike the textbook Wald interval
/// it keeps its coverage with small counts and rates near 0 — where tips live (a few percent
/// converting) — and never leaves [-1, 1]. `BENCHMARKS.md` ("Experiments: the statistics, simulated")
/// records its coverage in seeded simulations.
package struct ProportionDifference: Sendable, Hashable, Codable {
    /// `treatment − holdout`, as a proportion (0.02 is two percentage points).
    package var estimate: Double
    package var lower: Double
    package var upper: Double

    /// The two-sided 95% normal quantile.
    package static let z95 = 1.959_963_984_540_054

    /// Whether the interval excludes 0: a difference at the 5% level.
    package var isSignificant: Bool { lower > 0 || upper < 0 }

    /// `x1 / n1 − x2 / n2` with its interval; `nil` when either arm is empty.
    package init?(successes x1: Int, of n1: Int, minus x2: Int, of n2: Int, z: Double = Self.z95) {
        guard n1 > 0, n2 > 0 else { return nil }
        let p1 = Double(x1) / Double(n1)
        let p2 = Double(x2) / Double(n2)
        let (l1, u1) = Self.wilson(x1, n1, z: z)
        let (l2, u2) = Self.wilson(x2, n2, z: z)
        estimate = p1 - p2
        lower = estimate - ((p1 - l1) * (p1 - l1) + (u2 - p2) * (u2 - p2)).squareRoot()
        upper = estimate + ((u1 - p1) * (u1 - p1) + (p2 - l2) * (p2 - l2)).squareRoot()
    }

    /// The two-sided normal quantile for a confidence level (`z(0.95)` = 1.959964…): Acklam's rational
    /// approximation of the inverse normal distribution (relative error below 1.2e-9).
    package static func z(confidence: Double) -> Double {
        if confidence == 0.95 { return z95 }
        let p = 1 - (1 - confidence) / 2
        let a = [
            -3.969_683_028_665_376e1, 2.209_460_984_245_205e2, -2.759_285_104_469_687e2, 1.383_577_518_672_690e2,
            -3.066_479_806_614_716e1, 2.506_628_277_459_239,
        ]
        let b = [
            -5.447_609_879_822_406e1, 1.615_858_368_580_409e2, -1.556_989_798_598_866e2, 6.680_131_188_771_972e1,
            -1.328_068_155_288_572e1,
        ]
        let c = [
            -7.784_894_002_430_293e-3, -3.223_964_580_411_365e-1, -2.400_758_277_161_838, -2.549_732_539_343_734,
            4.374_664_141_464_968, 2.938_163_982_698_783,
        ]
        let d = [7.784_695_709_041_462e-3, 3.224_671_290_700_398e-1, 2.445_134_137_142_996, 3.754_408_661_907_416]
        if p > 1 - 0.024_25 {
            let q = (-2 * Foundation.log(1 - p)).squareRoot()
            return -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5])
                / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1)
        }
        let q = p - 0.5
        let r = q * q
        return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q
            / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1)
    }

    /// Wilson's score interval for `x` successes of `n`.
    package static func wilson(_ x: Int, _ n: Int, z: Double = z95) -> (lower: Double, upper: Double) {
        let n = Double(n)
        let p = Double(x) / n
        let z2 = z * z
        let denominator = 1 + z2 / n
        let center = (p + z2 / (2 * n)) / denominator
        let half = z / denominator * (p * (1 - p) / n + z2 / (4 * n * n)).squareRoot()
        return (max(0, center - half), min(1, center + half))
    }
}
