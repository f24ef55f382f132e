/// The protocol's number model (`protocol.md`, section 1): integers are exact within ±(2^53 − 1),
/// the range every JSON implementation (JavaScript's included) reads without loss.
public enum JSONNumberLimits {
    /// 2^53 − 1 = 9007199254740991.
    public static let maxInteger: Int64 = 9_007_199_254_740_991
}
