/// What an account, device or admin-key name may be (protocol.md section 6): 1 to 256 bytes of
/// UTF-8 with no control characters (Unicode category Cc). Names are never normalized: they compare
/// scalar by scalar. A display's `epoch` names a device too, so changes are checked with it.
public enum NameRules {
    public static let maxBytes = 256

    /// Why `name` cannot be a name, or `nil` when it can.
    public static func violation(_ name: String) -> String? {
        if name.isEmpty { return "must not be empty" }
        if name.utf8.count > maxBytes { return "must be at most \(maxBytes) bytes of UTF-8" }
        if name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            return "must not contain control characters"
        }
        return nil
    }
}
