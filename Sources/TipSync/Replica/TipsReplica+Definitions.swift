import Foundation
import Synchronization
import TipSyncCore

/// What the replica knows about tips, parameters and events beyond synced data: their definitions,
/// from Swift types or a catalog file.
extension TipsReplica {
    /// Registers a parameter's default (and whether it is transient). The first registration wins.
    public func register(parameter: ParameterDefinition) {
        core.withLock { core in Self.register(parameter, in: &core) }
    }

    static func register(_ parameter: ParameterDefinition, in core: inout Core) {
        if core.parameters[parameter.id] == nil { core.parameters[parameter.id] = parameter }
    }

    /// Registers an event's donation limit.
    public func register(event: EventDefinition) {
        core.withLock { core in Self.register(event, in: &core) }
    }

    static func register(_ event: EventDefinition, in core: inout Core) {
        if let limit = event.donationLimit, core.donationLimits[event.id] != limit {
            core.donationLimits[event.id] = limit
        }
    }

    /// Loads a catalog: its tips, groups, parameters, events and display frequency.
    /// - Parameter replacing: forget tips, groups and parameters loaded before (a catalog file
    ///   that changed); otherwise they are added to what is already known.
    public func load(catalog: Catalog, replacing: Bool = false) throws {
        try load(catalog: catalog, replacing: replacing, fromServer: false)
    }

    /// `fromServer`: the server's catalog (``applyServerCatalog(_:tag:)``), whose tips also override
    /// tips declared in code with the same id.
    func load(catalog: Catalog, replacing: Bool, fromServer: Bool) throws {
        try catalog.validate()
        core.withLock { core in
            // The tips for this device's platform, with its settings (protocol.md §13.11).
            let whole = catalog
            let catalog = catalog.forPlatform(core.deviceContext.platform)
            core.catalogIsServers = fromServer
            if replacing {
                core.catalog = [:]
                core.catalogOrder = []
                core.otherPlatformsTips = [:]
                core.groups = [:]
                core.parameters = [:]
                core.catalogEvents = []
                core.displayFrequency = .immediate
                core.tipsEnabled = true
            }
            for parameter in catalog.parameters { core.parameters[parameter.id] = parameter }
            for event in catalog.events {
                Self.register(event, in: &core)
                core.catalogEvents.insert(event.id)
            }
            for tip in catalog.tips where core.catalog.updateValue(tip, forKey: tip.id) == nil {
                core.catalogOrder.append(tip.id)
            }
            for tip in whole.tips where core.catalog[tip.id] == nil {
                core.otherPlatformsTips[tip.id] = tip.platforms ?? []
            }
            for group in catalog.groups { core.groups[group.id] = group }
            if let frequency = catalog.displayFrequency { core.displayFrequency = frequency }
            if let enabled = catalog.enabled { core.tipsEnabled = enabled }
            notifyObservers(&core)
        }
    }

    /// The parameters registered or loaded from a catalog, in id order.
    public var parameterDefinitions: [ParameterDefinition] {
        core.withLock { $0.parameters.values.sorted { $0.id < $1.id } }
    }

    /// The events loaded catalogs declare, in id order.
    public var catalogEvents: [String] {
        core.withLock { $0.catalogEvents.sorted() }
    }

    /// The catalog's tips, in the order the catalog lists them (tips of later catalogs after).
    public var catalogTips: [TipDefinition] {
        core.withLock { core in core.catalogOrder.compactMap { core.catalog[$0] } }
    }

    /// A catalog tip by id.
    public func catalogTip(_ id: String) -> TipDefinition? {
        core.withLock { $0.catalog[id] }
    }

    /// The platforms a loaded catalog gives tip `id` when it is not for this device's platform
    /// (protocol.md §13.11): `["web", "linux"]`; `nil` when the tip is for this device, or unknown.
    public func platforms(ofTipForOthers id: String) -> [String]? {
        core.withLock { $0.otherPlatformsTips[id] }
    }

    /// A catalog group by id.
    public func catalogGroup(_ id: String) -> TipGroupDefinition? {
        core.withLock { $0.groups[id] }
    }

    /// The app-wide display frequency.
    public var displayFrequency: DisplayFrequency {
        get { core.withLock { $0.displayFrequency } }
        set {
            core.withLock { core in
                core.displayFrequency = newValue
                notifyObservers(&core)
            }
        }
    }

    /// Testing overrides (TipKit's show/hide for testing).
    public var testingOverrides: TestingOverrides {
        get { core.withLock { $0.overrides } }
        set {
            core.withLock { core in
                core.overrides = newValue
                notifyObservers(&core)
            }
        }
    }
}
