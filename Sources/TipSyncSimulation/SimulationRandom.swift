public import TipSyncCore

/// The simulator's generator: the core's ``SplitMix64`` (the same seed gives the same history everywhere).
public typealias SimulationRandom = SplitMix64

extension SplitMix64 {
    /// `true` with probability `p`.
    public mutating func chance(_ p: Double) -> Bool {
        Double.random(in: 0..<1, using: &self) < p
    }
}
