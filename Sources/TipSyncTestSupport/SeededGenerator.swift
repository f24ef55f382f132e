public import TipSyncCore

/// The seeded generator tests use: the core's ``SplitMix64``.
public typealias SeededGenerator = SplitMix64
