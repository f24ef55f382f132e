import Hummingbird
import Logging

/// The request context of the sync API: carries the authenticated device once the bearer middleware ran.
public struct SyncRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public var identity: DeviceIdentity?
    /// Bodies are collected up to the configured limit by the routes themselves.
    public var maxUploadSize: Int { .max }

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
    }

    /// The authenticated device; routes behind the bearer middleware always have one.
    func requireIdentity() throws -> DeviceIdentity {
        guard let identity else { throw SyncError.unauthorized("missing bearer token") }
        return identity
    }
}
