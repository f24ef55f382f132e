import Foundation
import TipSyncCore

extension Tips {
    /// The catalog (`protocol.md` §13.1) of tips declared in Swift, with the same ids: each tip's
    /// title, message, image, actions, rules (from `#Rule`) and options, the parameters its rules read
    /// (with their defaults) and the events (with their donation limits). Load it into an agent, upload
    /// it to the server, or hand it to another platform's client: it evaluates as the Swift tips do.
    /// - Throws: ``Catalog/ValidationError`` when the declarations do not make a valid catalog (an id
    ///   that is not NFC, two tips with one id).
    public static func catalog(
        of tips: [any Tip], groups: [TipGroupDefinition] = [], displayFrequency: DisplayFrequency? = nil
    ) throws(Catalog.ValidationError) -> Catalog {
        var parameters: [ParameterDefinition] = []
        var events: [EventDefinition] = []
        var seenParameters = Set<String>()
        var seenEvents = Set<String>()
        for tip in tips {
            for rule in tip.rules {
                for parameter in rule.parameters where seenParameters.insert(parameter.id).inserted {
                    parameters.append(parameter)
                }
                for event in rule.events where seenEvents.insert(event.id).inserted { events.append(event) }
            }
        }
        let catalog = Catalog(
            displayFrequency: displayFrequency, parameters: parameters, events: events, tips: tips.map(\.definition),
            groups: groups)
        try catalog.validate()
        return catalog
    }

    /// ``catalog(of:groups:displayFrequency:)`` as JSON text (keys sorted): what a build step writes
    /// to a file, e.g. an executable target that prints it.
    public static func catalogJSON(
        of tips: [any Tip], groups: [TipGroupDefinition] = [], displayFrequency: DisplayFrequency? = nil
    ) throws -> String {
        let catalog = try catalog(of: tips, groups: groups, displayFrequency: displayFrequency)
        return String(decoding: try JSONCoding.encoder.encode(catalog), as: UTF8.self)
    }
}
