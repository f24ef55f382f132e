import Foundation
package import Hummingbird
import Logging
import NIOCore
import TipSyncCore
package import TipSyncDeviceService
import TipSyncServerBasics
package import TipSyncStorage

/// The `/admin/v1` routes: what an app's backend calls to manage accounts, devices and tokens
/// (protocol.md section 15). Every route needs an admin key (``AdminAuthMiddleware``).
package struct AdminController: Sendable {
    let store: any SyncStore
    let notifier: ChangeNotifier
    let activity: DeviceActivity
    let now: @Sendable () -> Int64

    package init(
        store: any SyncStore, notifier: ChangeNotifier, activity: DeviceActivity, now: @escaping @Sendable () -> Int64
    ) {
        self.store = store
        self.notifier = notifier
        self.activity = activity
        self.now = now
    }
    /// The largest page of `GET /admin/v1/accounts`.
    static let maxListLimit = 1000
    /// Log entries read per query while exporting.
    static let exportPage = 1000

    package func addRoutes(to group: RouterGroup<SyncRequestContext>, table: RouteTable) {
        let prefix = "/admin/v1"
        group.on("catalog", method: .get, recordingIn: table, prefix: prefix, use: catalog)
        group.on("catalog", method: .put, recordingIn: table, prefix: prefix, use: putCatalog)
        group.on("catalog/platforms/:platform", method: .put, recordingIn: table, prefix: prefix, use: putPlatformPart)
        group.on(
            "catalog/platforms/:platform", method: .delete, recordingIn: table, prefix: prefix, use: deletePlatformPart)
        group.on("catalog/versions", method: .get, recordingIn: table, prefix: prefix, use: catalogVersions)
        group.on("catalog/versions/:version", method: .get, recordingIn: table, prefix: prefix, use: catalogVersion)
        group.on(
            "catalog/versions/:version/restore", method: .post, recordingIn: table, prefix: prefix,
            use: restoreCatalog)
        group.on("accounts", method: .get, recordingIn: table, prefix: prefix, use: list)
        group.on("accounts/:account", method: .put, recordingIn: table, prefix: prefix, use: create)
        group.on("accounts/:account", method: .get, recordingIn: table, prefix: prefix, use: details)
        group.on("accounts/:account", method: .delete, recordingIn: table, prefix: prefix, use: erase)
        group.on("accounts/:account/export", method: .get, recordingIn: table, prefix: prefix, use: export)
        group.on("accounts/:account/compact", method: .post, recordingIn: table, prefix: prefix, use: compact)
        group.on(
            "accounts/:account/devices/:device/tokens", method: .post, recordingIn: table, prefix: prefix,
            use: createToken)
        group.on(
            "accounts/:account/devices/:device/tokens", method: .delete, recordingIn: table, prefix: prefix,
            use: revokeTokens)
        group.on(
            "accounts/:account/tips/:tip/:action", method: .post, recordingIn: table, prefix: prefix, use: changeTip)
        group.on("tips", method: .get, recordingIn: table, prefix: prefix, use: tipFigures)
    }

    @Sendable func list(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let limit = try SyncController.integer(
            request.uri.queryParameters["limit"].map(String.init), name: "limit", default: 100)
        guard (1...Self.maxListLimit).contains(limit) else {
            throw SyncError.invalidParameter("limit must be between 1 and \(Self.maxListLimit)")
        }
        let after = request.uri.queryParameters["after"].map(String.init)
        // One more than asked: whether there is a next page, without a second query.
        let accounts = try await store.accounts(after: after, limit: limit + 1)
        let page = Array(accounts.prefix(limit))
        return try SyncController.json(
            AccountList(accounts: page, next: accounts.count > limit ? page.last?.name : nil))
    }

    @Sendable func create(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let name = try NameRules.pathSegment(context, "account")
        let (_, created) = try await store.ensureAccount(name: name, at: now())
        var response = try SyncController.json(AccountCreated(name: name, created: created))
        if created { response.status = .created }
        return response
    }

    @Sendable func details(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let name = try NameRules.pathSegment(context, "account")
        guard let (_, details) = try await currentDetails(name: name) else { throw Self.noAccount(name) }
        return try SyncController.json(details)
    }

    /// The account's details with what only this instance knows: which devices are live here, and
    /// last-seen times not yet written to the store.
    package func currentDetails(name: String) async throws -> (id: Int64, details: AccountDetails)? {
        guard let id = try await store.accountID(named: name) else { return nil }
        // Memory first, the store second: a flush between the two reads has written what it took.
        let unwritten = activity.unwritten(account: id)
        guard var details = try await store.accountDetails(name: name) else { return nil }
        let live = notifier.liveDevices(account: id)
        for index in details.devices.indices {
            let name = details.devices[index].name
            details.devices[index].live = live.contains(DeviceIdentity(accountID: id, device: name))
            if let seen = unwritten.seen[name] {
                details.devices[index].lastSeen = max(details.devices[index].lastSeen ?? .min, seen)
            }
            if let pulled = unwritten.pulled[name] { details.devices[index].pulledThrough = pulled }
            if let context = unwritten.contexts[name] { details.devices[index].context = context }
        }
        return (id, details)
    }

    @Sendable func erase(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let name = try NameRules.pathSegment(context, "account")
        guard let (id, entries) = try await store.eraseAccount(name: name, at: now()) else {
            throw Self.noAccount(name)
        }
        // This instance at once; the others hear it from the store (PostgreSQL NOTIFY in the erasure's
        // transaction).
        notifier.handle(.erased(account: id))
        context.logger.notice("account erased", metadata: ["logEntries": "\(entries)"])
        return try SyncController.json(AccountErased(name: name, logEntries: entries))
    }

    /// The account's whole log as JSON lines, in log order, read page by page while it is sent.
    @Sendable func export(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let name = try NameRules.pathSegment(context, "account")
        guard let id = try await store.accountID(named: name) else { throw Self.noAccount(name) }
        let store = store
        var headers = HTTPFields()
        headers[.contentType] = "application/x-ndjson"
        headers[.contentDisposition] = "attachment; filename=\"tipsync-export.jsonl\""
        return Response(
            status: .ok, headers: headers,
            body: ResponseBody { writer in
                try await store.exportLog(account: id, pageSize: Self.exportPage) { bodies in
                    var buffer = ByteBuffer()
                    for body in bodies {
                        buffer.writeString(body)
                        buffer.writeString("\n")
                    }
                    try await writer.write(buffer)
                }
                try await writer.finish(nil)
            })
    }

    @Sendable func compact(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let name = try NameRules.pathSegment(context, "account")
        guard let id = try await store.accountID(named: name) else { throw Self.noAccount(name) }
        let dropped = try await LogCompactor(store: store).compact(account: id)
        return try SyncController.json(Compacted(dropped: dropped, logEntries: try await store.logCount(account: id)))
    }

    @Sendable func createToken(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let account = try NameRules.pathSegment(context, "account")
        let device = try NameRules.pathSegment(context, "device")
        guard try await store.accountID(named: account) != nil else { throw Self.noAccount(account) }
        let token = try await CredentialIssuance(store).createToken(accountName: account, device: device)
        var response = try SyncController.json(TokenCreated(account: account, device: device, token: token))
        response.status = .created
        return response
    }

    @Sendable func revokeTokens(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let account = try NameRules.pathSegment(context, "account")
        let device = try NameRules.pathSegment(context, "device")
        guard let (id, tokens) = try await store.revokeTokens(accountName: account, device: device, at: now()) else {
            throw SyncError.notFound("no device '\(device)' in account '\(account)'")
        }
        notifier.handle(.revoked(account: id, device: device))
        return try SyncController.json(TokensRevoked(account: account, device: device, revoked: tokens))
    }

    /// The stored tip catalog, as uploaded.
    @Sendable func catalog(_ request: Request, context: SyncRequestContext) async throws -> Response {
        guard let text = try await store.catalogJSON() else {
            throw SyncError.notFound(
                "no catalog stored; PUT /admin/v1/catalog or run 'tipsync-server catalog put FILE'")
        }
        return SyncController.json(text: text)
    }

    /// Validates a catalog (protocol.md section 13) and stores it; a bad one is refused whole, and
    /// so is one that would remove what platforms' parts added unless `?replaceAll=true` (§13.11).
    @Sendable func putCatalog(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let replaceAll: Bool
        switch request.uri.queryParameters["replaceAll"].map(String.init) {
        case nil, "false": replaceAll = false
        case "true": replaceAll = true
        case let other?: throw SyncError.invalidParameter("replaceAll: 'true' or 'false', not '\(other)'")
        }
        let body = try await request.body.collect(upTo: context.maxUploadSize)
        let catalog: Catalog
        do {
            catalog = try Catalog(validating: body.readableBytesView)
        } catch {
            // The message starts with the field (protocol.md §13: `tips[0].rules[1]: …`).
            throw SyncError.invalidParameter(error.description)
        }
        let version: Int64
        do {
            version = try await storeCatalog(
                String(buffer: body), by: context.adminKey ?? "admin", replacingParts: replaceAll)
        } catch let error as PlatformPartsWouldGo {
            throw SyncError.invalidParameter(
                error.description + " (PUT /admin/v1/catalog/platforms/{platform} uploads a part; "
                    + "PUT /admin/v1/catalog?replaceAll=true removes them)")
        }
        return SyncController.json(text: #"{"tips":\#(catalog.tips.count),"version":\#(version)}"#)
    }

    /// Merges one platform's part into the stored catalog (protocol.md §13.11): what that platform
    /// exports replaces its own tips and settings, and leaves every other platform's tips alone.
    @Sendable func putPlatformPart(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let platform = try Self.platform(context)
        let body = try await request.body.collect(upTo: context.maxUploadSize)
        let part: Catalog
        do {
            part = try Catalog(validating: body.readableBytesView)
        } catch {
            throw SyncError.invalidParameter(error.description)
        }
        do {
            let (version, tips) = try await CatalogComposition(store).mergePlatformPart(
                part, as: platform, uploadedBy: context.adminKey ?? "admin", at: now())
            notifier.handle(.catalog)
            return SyncController.json(text: #"{"tips":\#(tips),"version":\#(version)}"#)
        } catch let error as CatalogCompositionError {
            throw SyncError.invalidParameter(error.description)
        }
    }

    /// Removes one platform's part from the stored catalog (protocol.md §13.11).
    @Sendable func deletePlatformPart(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let platform = try Self.platform(context)
        guard
            let (version, tips) = try await CatalogComposition(store).removePlatformPart(
                platform, uploadedBy: context.adminKey ?? "admin", at: now())
        else {
            throw SyncError.notFound(
                "no catalog stored; PUT /admin/v1/catalog or run 'tipsync-server catalog put FILE'")
        }
        notifier.handle(.catalog)
        return SyncController.json(text: #"{"tips":\#(tips),"version":\#(version)}"#)
    }

    /// The `{platform}` of a path: a platform name (protocol.md §13.11), else `400 invalid_parameter`.
    static func platform(_ context: SyncRequestContext) throws -> String {
        let platform = context.parameters.get("platform") ?? ""
        if let problem = Catalog.platformProblem(platform) { throw SyncError.invalidParameter("platform: \(problem)") }
        return platform
    }

    /// Every catalog version, newest first: who uploaded it, when, and what changed from the one before.
    @Sendable func catalogVersions(_ request: Request, context: SyncRequestContext) async throws -> Response {
        try SyncController.json(CatalogVersionList(try await store.catalogVersions()))
    }

    /// One catalog version's text, as uploaded.
    @Sendable func catalogVersion(_ request: Request, context: SyncRequestContext) async throws -> Response {
        SyncController.json(text: try await storedVersion(context).text)
    }

    /// Makes an earlier version current again, as a new version that records which one it restores;
    /// devices that follow the server's catalog are told at once.
    @Sendable func restoreCatalog(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let old = try await storedVersion(context)
        let catalog = try Catalog(validating: Array(old.text.utf8))
        let version = try await storeCatalog(old.text, by: context.adminKey ?? "admin", restoring: old.version)
        return SyncController.json(
            text: #"{"restoredFrom":\#(old.version),"tips":\#(catalog.tips.count),"version":\#(version)}"#)
    }

    /// Stores a validated catalog as the newest version and tells this instance's devices at once
    /// (PostgreSQL's NOTIFY tells the others): what an upload and a restore, from the API or the
    /// console, all do. Returns the new version.
    /// A catalog that would change a running experiment is refused (`400 invalid_parameter` naming
    /// the field, protocol.md §13.12).
    /// Stores a whole catalog (an upload, or `restored`'s text). An upload that would remove what
    /// platforms' parts added is refused unless `replacingParts`; a restore takes the version as it
    /// was, parts and all.
    /// - Throws: ``PlatformPartsWouldGo`` (each surface says how to replace everything), or `400
    ///   invalid_parameter` when the catalog would change a running experiment.
    func storeCatalog(
        _ text: String, by uploader: String, restoring restored: Int64? = nil, replacingParts: Bool = false
    ) async throws -> Int64 {
        let version: Int64
        do {
            if let restored {
                version = try await CatalogComposition(store).putCatalogJSON(
                    text, uploadedBy: uploader, at: now(), restoredFrom: restored)
            } else {
                version = try await CatalogComposition(store).putWholeCatalog(
                    text, replacingParts: replacingParts, uploadedBy: uploader, at: now())
            }
        } catch let error as CatalogCompositionError {
            throw SyncError.invalidParameter(error.description)
        }
        notifier.handle(.catalog)
        return version
    }

    func storedVersion(_ context: SyncRequestContext) async throws -> CatalogVersionRecord {
        guard let text = context.parameters.get("version"), let number = Int64(text), number > 0 else {
            throw SyncError.invalidParameter("version: a catalog version number (1, 2, …)")
        }
        guard let record = try await store.catalogVersions().first(where: { $0.version == number }) else {
            throw SyncError.notFound("no catalog version \(number) (GET /admin/v1/catalog/versions lists them)")
        }
        return record
    }

    static func noAccount(_ name: String) -> SyncError {
        .notFound("no account named '\(name)'; create it with PUT /admin/v1/accounts/{account}")
    }
}

// MARK: Bodies

struct AccountList: Codable, Sendable {
    var accounts: [AccountSummary]
    /// Pass as `after` for the next page; absent on the last page.
    var next: String?
}

struct AccountCreated: Codable, Sendable {
    var name: String
    var created: Bool
}

struct AccountErased: Codable, Sendable {
    var name: String
    var logEntries: Int
    var erased = true
}

struct Compacted: Codable, Sendable {
    var dropped: Int
    var logEntries: Int
}

struct TokenCreated: Codable, Sendable {
    var account: String
    var device: String
    var token: String
}

struct TokensRevoked: Codable, Sendable {
    var account: String
    var device: String
    var revoked: Int
}
