public import SwiftSyntax
import SwiftSyntaxBuilder
public import SwiftSyntaxMacros

/// `@Parameter static var name: T = default` becomes a computed property backed by the replica, plus
/// `static let $name = Tips.Parameter<T>(id: "Type.name", defaultValue: default, options: [...])`;
/// `@Parameter(id: "isLoggedIn")` names it explicitly (the id catalogs and other platforms use).
/// (A stored `static var` is unsafe global state in Swift 6; this is why TipKit's `@Parameter` is a macro.)
public struct ParameterMacro: AccessorMacro, PeerMacro {
    struct Property {
        var name: String
        var type: TypeSyntax
        var defaultValue: ExprSyntax
    }

    static func property(_ declaration: some DeclSyntaxProtocol) throws -> Property {
        guard let variable = declaration.as(VariableDeclSyntax.self),
            variable.bindingSpecifier.tokenKind == .keyword(.var),
            variable.bindings.count == 1, let binding = variable.bindings.first,
            let name = binding.pattern.as(IdentifierPatternSyntax.self)?.identifier.trimmedDescription
        else { throw MacroError("@Parameter applies to one 'static var name: Type = default'") }
        guard variable.modifiers.contains(where: { $0.name.tokenKind == .keyword(.static) }) else {
            throw MacroError("@Parameter properties must be static, as in TipKit: 'static var \(name)'")
        }
        guard let type = binding.typeAnnotation?.type else {
            throw MacroError("@Parameter needs an explicit type: 'static var \(name): Type = default'")
        }
        guard let value = binding.initializer?.value else {
            throw MacroError("@Parameter needs a default value: 'static var \(name): \(type.trimmedDescription) = …'")
        }
        return Property(name: name, type: type.trimmed, defaultValue: value.trimmed)
    }

    public static func expansion(
        of node: AttributeSyntax, providingAccessorsOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AccessorDeclSyntax] {
        let property = try property(declaration)
        return [
            "get { Self.$\(raw: property.name).wrappedValue }",
            "set { Self.$\(raw: property.name).wrappedValue = newValue }",
        ]
    }

    public static func expansion(
        of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        let property = try property(declaration)
        let owner = context.lexicalContext.lazy.compactMap(Self.typeName).first ?? "Tips"
        let arguments = Array(node.arguments?.as(LabeledExprListSyntax.self) ?? [])
        // `@Parameter(id: "isLoggedIn")`: the id on the wire and in catalogs; default `Type.name`.
        let id =
            arguments.first { $0.label?.text == "id" }?.expression.trimmedDescription
            ?? "\"\(owner).\(property.name)\""
        let options = arguments.filter { $0.label == nil }.map(\.expression.trimmedDescription)
        let access =
            declaration.as(VariableDeclSyntax.self)?.modifiers
            .first { ["public", "internal", "fileprivate", "private", "package"].contains($0.name.text) }
            .map { "\($0.name.text) " } ?? ""
        return [
            """
            \(raw: access)static let $\(raw: property.name) = TipSync.Tips.Parameter<\(property.type)>(
                id: \(raw: id), defaultValue: \(property.defaultValue), options: [\(raw: options.joined(separator: ", "))])
            """
        ]
    }

    static func typeName(_ syntax: Syntax) -> String? {
        if let decl = syntax.as(StructDeclSyntax.self) { return decl.name.text }
        if let decl = syntax.as(ClassDeclSyntax.self) { return decl.name.text }
        if let decl = syntax.as(EnumDeclSyntax.self) { return decl.name.text }
        if let decl = syntax.as(ActorDeclSyntax.self) { return decl.name.text }
        if let decl = syntax.as(ExtensionDeclSyntax.self) { return decl.extendedType.trimmedDescription }
        return nil
    }
}
