import Foundation
import TipSyncCore
import TipSyncServerBasics

/// A storage-level failure with a message for operators (CLI) or a 500 (API).
package struct StoreError: Error, CustomStringConvertible, Sendable {
    package var description: String
    package init(_ description: String) { self.description = description }
}
