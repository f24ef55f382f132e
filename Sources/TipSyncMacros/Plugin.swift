import SwiftCompilerPlugin
import SwiftSyntaxMacros

@main
struct TipSyncMacrosPlugin: CompilerPlugin {
    let providingMacros: [Macro.Type] = [ParameterMacro.self, RuleMacro.self]
}
