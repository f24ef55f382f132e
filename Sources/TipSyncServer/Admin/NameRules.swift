import Foundation

/// What an account, device or admin-key name may be (protocol.md section 6): 1 to 256 bytes of
/// UTF-8 with no control characters. Names are never normalized: they compare scalar by scalar.
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

    /// A name taken from a path segment: percent-decoded and checked; `400 invalid_parameter` naming
    /// the parameter otherwise.
    static func pathSegment(_ context: SyncRequestContext, _ parameter: String) throws -> String {
        guard let raw = context.parameters.get(parameter), let name = raw.removingPercentEncoding else {
            throw SyncError.invalidParameter("\(parameter): not a valid percent-encoded UTF-8 name")
        }
        if let violation = violation(name) { throw SyncError.invalidParameter("\(parameter): \(violation)") }
        return name
    }
}
