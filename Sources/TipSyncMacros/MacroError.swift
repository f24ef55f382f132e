import SwiftDiagnostics
import SwiftSyntax

/// A compile-time error from a TipSync macro, shown at the offending syntax.
struct MacroError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
