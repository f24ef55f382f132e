import Foundation
import GRDB
import Synchronization
import TipSyncCore

/// What targeting reads about this device (protocol.md §13.8), and why a tip has its status (§13.9).
extension TipsReplica {
    /// The platform, app version, locale and account targeting reads. Filled from the build and the
    /// system (``TipSyncCore/DeviceContext/current``); an app may set any of it, such as the
    /// locale it shows instead of the system's. The account comes from the server (`GET /v1/account`,
    /// asked by the sync client) and is kept across launches; ``setAccount(_:)`` sets it by hand.
    public var deviceContext: DeviceContext {
        get { core.withLock { $0.deviceContext } }
        set {
            core.withLock { core in
                core.deviceContext = newValue
                notifyObservers(&core)
            }
        }
    }

    /// Records the account's name (what rollout buckets hash) and keeps it for later launches.
    package func setAccount(_ name: String) throws {
        try database.writer.write { db in try ReplicaDatabase.setMeta(.account, name, db) }
        core.withLock { core in
            guard core.deviceContext.account != name else { return }
            core.deviceContext.account = name
            notifyObservers(&core)
        }
    }

    /// Why the tip has its status now (protocol.md §13.9): the deciding step and what it read — the
    /// rule or targeting condition that does not hold with its values, who dismissed it and when, the
    /// display totals and limit, until when display frequency holds it.
    public func explanation(of tip: TipDefinition) -> TipExplanation {
        core.withLock { core in
            evaluator(core).explanation(of: Self.effective(tip, core.catalogIsServers, core.catalog))
        }
    }

    /// The explanation of a catalog tip; `nil` when the catalog has no such tip.
    public func explanation(ofTip id: String) -> TipExplanation? {
        core.withLock { core in core.catalog[id].map { evaluator(core).explanation(of: $0) } }
    }
}

extension DeviceContext {
    /// This device as the system describes it: the platform this build is for, the app's version
    /// (`CFBundleShortVersionString`, when the bundle has one) and `Locale.current` as a BCP 47 tag.
    public static var current: DeviceContext {
        #if os(iOS)
            let platform = "ios"
        #elseif os(macOS)
            let platform = "macos"
        #elseif os(tvOS)
            let platform = "tvos"
        #elseif os(watchOS)
            let platform = "watchos"
        #elseif os(visionOS)
            let platform = "visionos"
        #elseif os(Android)
            let platform = "android"
        #elseif os(Windows)
            let platform = "windows"
        #else
            let platform = "linux"
        #endif
        let version = Bundle.main.object(forInfoDictionaryKey: "CFBundleShortVersionString") as? String
        return DeviceContext(platform: platform, appVersion: version, locale: Locale.current.identifier(.bcp47))
    }
}

extension Tip {
    /// Why this tip has its status now, on the shared replica (protocol.md §13.9); `nil` before
    /// `Tips.configure`.
    public var explanation: TipExplanation? {
        guard let replica = Tips.replica else { return nil }
        return explanation(in: replica)
    }

    /// Why this tip has its status now, on `replica`.
    public func explanation(in replica: TipsReplica) -> TipExplanation {
        replica.explanation(of: register(in: replica))
    }
}
