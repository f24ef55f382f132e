import Foundation
import Hummingbird
import TipSyncCore
import TipSyncServerBasics
import TipSyncStorage

extension NameRules {
    /// A name taken from a path segment: percent-decoded and checked; `400 invalid_parameter` naming
    /// the parameter otherwise.
    package static func pathSegment(_ context: SyncRequestContext, _ parameter: String) throws -> String {
        guard let raw = context.parameters.get(parameter), let name = raw.removingPercentEncoding else {
            throw SyncError.invalidParameter("\(parameter): not a valid percent-encoded UTF-8 name")
        }
        if let violation = violation(name) { throw SyncError.invalidParameter("\(parameter): \(violation)") }
        return name
    }
}
