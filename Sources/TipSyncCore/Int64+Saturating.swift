extension Int64 {
    /// `value` rounded toward zero and clamped to `Int64`'s range (NaN: 0). Converting a `Double`
    /// with `Int64(_:)` traps outside the range, and these come from catalogs and clocks.
    init(saturating value: Double) {
        if value.isNaN {
            self = 0
        } else if value >= 9_223_372_036_854_775_807.0 {
            self = .max
        } else if value <= -9_223_372_036_854_775_808.0 {
            self = .min
        } else {
            self = Int64(value)
        }
    }
}
