import SwiftCompilerPlugin
import SwiftSyntaxMacros

@main
struct TipSyncMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [ParameterMacro.self, RuleMacro.self]
}
