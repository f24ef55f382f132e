import Foundation
import GRDB
import TipSyncCore
import TipSyncServerBasics

/// A storage-level failure with a message for operators (CLI) or a 500 (API).
public struct StoreError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}
