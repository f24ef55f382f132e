public import Foundation

extension Tips {
    /// An option for ``Tips/configure(_:)``, with TipKit's names.
    public struct ConfigurationOption: Sendable {
        enum Kind: Sendable {
            case displayFrequency(DisplayFrequency)
            case datastoreLocation(DatastoreLocation)
            case deviceID(String)
            case clock(TipsClock)
            case sync(SyncConfiguration)
        }

        let kind: Kind

        /// `.immediate` (default), `.hourly`, `.daily`, `.weekly`, `.monthly` or `.custom(seconds)`.
        public typealias DisplayFrequency = TipSyncCore.DisplayFrequency

        /// How often new tips may appear, app-wide.
        public static func displayFrequency(_ frequency: DisplayFrequency) -> Self {
            Self(kind: .displayFrequency(frequency))
        }

        /// Where the replica's database lives.
        public static func datastoreLocation(_ location: DatastoreLocation) -> Self {
            Self(kind: .datastoreLocation(location))
        }

        /// The id a new replica gets (default: a random UUID). TipSync only.
        public static func deviceID(_ id: String) -> Self { Self(kind: .deviceID(id)) }

        /// The physical clock (inject one in tests). TipSync only.
        public static func clock(_ clock: TipsClock) -> Self { Self(kind: .clock(clock)) }

        /// Where the datastore lives.
        public enum DatastoreLocation: Sendable {
            /// `$XDG_DATA_HOME/tipsync/<program>` (or `~/.local/share/tipsync/<program>`); on Apple
            /// platforms `Application Support/TipSync`.
            case applicationDefault
            /// An app group's container on Apple platforms; elsewhere `applicationDefault/<identifier>`.
            case groupContainer(identifier: String)
            /// A directory of your choosing.
            case url(URL)

            func directory() throws -> URL {
                switch self {
                case .url(let url): return url
                case .applicationDefault: return Self.defaultDirectory()
                case .groupContainer(let identifier):
                    #if canImport(Darwin)
                        if let container = FileManager.default.containerURL(
                            forSecurityApplicationGroupIdentifier: identifier)
                        {
                            return container.appendingPathComponent("TipSync")
                        }
                    #endif
                    return Self.defaultDirectory().appendingPathComponent(identifier)
                }
            }

            static func defaultDirectory() -> URL {
                #if canImport(Darwin)
                    let base = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask)[0]
                    return base.appendingPathComponent("TipSync")
                #else
                    let environment = ProcessInfo.processInfo.environment
                    let base =
                        environment["XDG_DATA_HOME"].map { URL(fileURLWithPath: $0) }
                        ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share")
                    return base.appendingPathComponent("tipsync").appendingPathComponent(
                        ProcessInfo.processInfo.processName)
                #endif
            }
        }
    }
}
