import Foundation
import TipSyncDeviceService
import TipSyncServerBasics
import TipSyncStorage

/// How many reached accounts an experiment needs to detect a difference (what Appcues sizes a
/// control group with): the normal-approximation sample size for two proportions with unequal arms
/// (Fleiss, Levin and Paik, "Statistical Methods for Rates and Proportions", 3rd ed., §4.2, without
/// the continuity correction), two-sided at the 5% level with 80% power.
package struct SampleSize: Sendable, Hashable, Codable {
    /// Reached accounts needed in the holdout.
    package var holdout: Int
    /// Reached accounts needed in the treatment.
    package var treatment: Int
    /// Both.
    package var total: Int { holdout + treatment }

    /// The one-sided 80% power normal quantile.
    package static let z80 = 0.841_621_233_572_914_3

    /// For a holdout converting at `baseline` (0–1), a minimum detectable effect of `effect` (an
    /// absolute difference, 0.02 for two percentage points) and `holdoutPercent` of accounts held
    /// out; `nil` when the inputs make no sense (a rate outside (0, 1), no effect, a holdout outside
    /// (0, 100)).
    package init?(baseline: Double, effect: Double, holdoutPercent: Double) {
        let treated = baseline + effect
        guard baseline > 0, baseline < 1, treated > 0, treated < 1, effect != 0, holdoutPercent > 0,
            holdoutPercent < 100, baseline.isFinite, effect.isFinite, holdoutPercent.isFinite
        else { return nil }
        // r treated accounts for every held-out one.
        let r = (100 - holdoutPercent) / holdoutPercent
        let pooled = (baseline + r * treated) / (1 + r)
        let a = ProportionDifference.z95 * (pooled * (1 - pooled) * (1 + 1 / r)).squareRoot()
        let b = Self.z80 * (baseline * (1 - baseline) + treated * (1 - treated) / r).squareRoot()
        let holdout = ((a + b) * (a + b) / (effect * effect)).rounded(.up)
        let treatment = (holdout * r).rounded(.up)
        // Beyond a billion accounts the answer is "more than any product has": no size.
        guard holdout.isFinite, treatment.isFinite, holdout < 1e9, treatment < 1e9 else { return nil }
        self.holdout = Int(holdout)
        self.treatment = Int(treatment)
    }
}
