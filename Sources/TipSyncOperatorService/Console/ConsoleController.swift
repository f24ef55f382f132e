import Foundation
package import Hummingbird
import Logging
package import Mustache
import NIOCore
import TipSyncCore
package import TipSyncDeviceService
import TipSyncServerBasics
package import TipSyncStorage

/// The operator console under `/console` (on with `--console`): server-rendered HTML from
/// ``ConsoleTemplates``, logged in with an admin key. Every page but the login page needs a session
/// (else a redirect to `/console/login`); every POST needs the session's CSRF token (else `403`).
/// Account state is computed from the account's log with `TipSyncCore`, the merge every device runs.
package struct ConsoleController: Sendable {
    let store: any SyncStore
    let admin: AdminController
    let sessions: ConsoleSessions
    let history: RequestHistory
    let notifier: ChangeNotifier
    let library: MustacheLibrary
    /// Failed logins per address: too many, and the address waits.
    let signIns: SignInThrottle
    let now: @Sendable () -> Int64

    package init(
        store: any SyncStore, admin: AdminController, sessions: ConsoleSessions, history: RequestHistory,
        notifier: ChangeNotifier, library: MustacheLibrary, signIns: SignInThrottle,
        now: @escaping @Sendable () -> Int64
    ) {
        self.store = store
        self.admin = admin
        self.sessions = sessions
        self.history = history
        self.notifier = notifier
        self.library = library
        self.signIns = signIns
        self.now = now
    }
    /// Accounts per page of `/console/accounts`.
    static let pageSize = 50
    /// Changes shown on an account page, newest first.
    static let recentChanges = 50

    package func addRoutes(to router: Router<SyncRequestContext>, table: RouteTable) {
        let group = router.group("console")
        let prefix = "/console"
        group.on("login", method: .get, recordingIn: table, prefix: prefix, use: loginPage)
        group.on("login", method: .post, recordingIn: table, prefix: prefix, use: login)
        group.on("logout", method: .post, recordingIn: table, prefix: prefix, use: signedIn(logout))
        group.on("", method: .get, recordingIn: table, prefix: prefix, use: signedIn(overview))
        group.on("accounts", method: .get, recordingIn: table, prefix: prefix, use: signedIn(accounts))
        group.on("accounts/:account", method: .get, recordingIn: table, prefix: prefix, use: signedIn(account))
        group.on("accounts/:account/export", method: .get, recordingIn: table, prefix: prefix, use: signedIn(export))
        group.on("accounts/:account/compact", method: .post, recordingIn: table, prefix: prefix, use: signedIn(compact))
        group.on("accounts/:account/erase", method: .get, recordingIn: table, prefix: prefix, use: signedIn(erasePage))
        group.on("accounts/:account/erase", method: .post, recordingIn: table, prefix: prefix, use: signedIn(erase))
        group.on(
            "accounts/:account/tips/:tip/:action", method: .post, recordingIn: table, prefix: prefix,
            use: signedIn(changeTip))
        group.on(
            "accounts/:account/devices/:device/revoke", method: .post, recordingIn: table, prefix: prefix,
            use: signedIn(revoke))
        group.on("tips", method: .get, recordingIn: table, prefix: prefix, use: signedIn(tips))
        group.on("tips/:tip", method: .get, recordingIn: table, prefix: prefix, use: signedIn(tip))
        group.on("catalog", method: .get, recordingIn: table, prefix: prefix, use: signedIn(catalogPage))
        group.on("catalog", method: .post, recordingIn: table, prefix: prefix, use: signedIn(uploadCatalog))
        group.on(
            "catalog/versions/:version/restore", method: .post, recordingIn: table, prefix: prefix,
            use: signedIn(restoreCatalog))
        addExperimentRoutes(to: group, table: table, prefix: prefix)
    }

    // MARK: Sessions

    struct SignedIn {
        var id: String
        var session: ConsoleSessions.Session
        /// The form fields of a POST (its CSRF token already checked).
        var form: [String: String]

        var view: [String: Any] {
            ["session": true, "csrf": session.csrf, "adminKeyName": session.adminKeyName]
        }
    }

    typealias Page = @Sendable (Request, SyncRequestContext, SignedIn) async throws -> Response

    /// Runs `page` for a signed-in operator whose admin key is still valid; else redirects to the
    /// login page. A POST without the session's CSRF token is `403`.
    func signedIn(_ page: @escaping Page) -> @Sendable (Request, SyncRequestContext) async throws -> Response {
        { request, context in
            guard let id = request.cookies[ConsoleSessions.cookieName]?.value,
                let session = try await sessions.session(id, now: now()),
                try await store.adminKeyName(forHash: session.adminKeyHash) != nil
            else { return Self.redirect("/console/login") }
            var form: [String: String] = [:]
            if request.method == .post {
                form = try await Self.form(request)
                guard let token = form["csrf"], ConstantTime.equal(token, session.csrf) else {
                    throw SyncError.csrfFailed(
                        "the form's CSRF token is missing or stale; reload the page and try again")
                }
            }
            return try await page(request, context, SignedIn(id: id, session: session, form: form))
        }
    }

    @Sendable func loginPage(_ request: Request, context: SyncRequestContext) async throws -> Response {
        render("login", ["title": "Log in"])
    }

    @Sendable func login(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let key = try await Self.form(request)["key"]?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        let hash = TokenHasher.hash(key)
        guard !key.isEmpty, let name = try await store.adminKeyName(forHash: hash) else {
            let refusal = signIns.refuse(
                request, context, kind: .console, SyncError.unauthorized("unknown or revoked admin key"), now: now())
            if refusal.code == .rateLimited {
                var response = render(
                    "login", ["title": "Log in", "error": "Too many failed logins. \(refusal.message)."])
                response.status = .tooManyRequests
                response.headers[.retryAfter] = refusal.retryAfter.map(String.init)
                return response
            }
            var response = render("login", ["title": "Log in", "error": "That admin key is unknown or revoked."])
            response.status = .unauthorized
            return response
        }
        let (id, _) = try await sessions.open(adminKeyHash: hash, name: name, now: now())
        context.logger.notice("console login", metadata: ["adminKey": "\(name)"])
        var response = Self.redirect("/console")
        response.headers[.setCookie] = sessionCookie(
            id, request: request, maxAge: Int(sessions.lifetimeMilliseconds / 1000))
        return response
    }

    @Sendable func logout(_ request: Request, context: SyncRequestContext, signedIn: SignedIn) async throws -> Response
    {
        try await sessions.close(signedIn.id)
        var response = Self.redirect("/console/login")
        response.headers[.setCookie] = sessionCookie("", request: request, maxAge: 0)
        return response
    }

    func sessionCookie(_ value: String, request: Request, maxAge: Int) -> String {
        // Secure when the console is reached over TLS (directly or through a proxy that says so).
        let tls = request.uri.scheme == .https || request.headers[.init("X-Forwarded-Proto")!] == "https"
        return Cookie(
            name: ConsoleSessions.cookieName, value: value, maxAge: maxAge, path: "/console", secure: tls,
            httpOnly: true, sameSite: .strict
        ).description
    }

    // MARK: Pages

    @Sendable func overview(_ request: Request, context: SyncRequestContext, signedIn: SignedIn) async throws
        -> Response
    {
        let overview = try await store.overview()
        let series = history.series(now: now())
        var view = signedIn.view
        view["title"] = "Overview"
        view["accounts"] = overview.accounts
        view["devices"] = overview.devices
        view["live"] = notifier.count
        view["databaseSize"] = Self.bytes(overview.databaseBytes)
        view["pushSpark"] = Sparkline.svg(series.map(\.pushes), label: "pushes per minute")
        view["pullSpark"] = Sparkline.svg(series.map(\.pulls), label: "pulls per minute")
        view["errorSpark"] = Sparkline.svg(series.map(\.errors), label: "errors per minute")
        view["pushTotal"] = series.reduce(0) { $0 + $1.pushes }
        view["pullTotal"] = series.reduce(0) { $0 + $1.pulls }
        view["errorTotal"] = series.reduce(0) { $0 + $1.errors }
        view["compactions"] = overview.recentCompactions.map {
            ["account": $0.account, "path": Self.pathSegment($0.account), "at": Self.time($0.at)]
        }
        // Devices that stopped syncing: not seen for `quiet` hours (a refused device is never seen).
        let hours = request.uri.queryParameters["quiet"].flatMap { Int($0) }.map { min(max($0, 1), 24 * 365) } ?? 24
        view["quietHours"] = hours
        // The support device (``AdminController/adminDevice``) never makes a request: it is not quiet.
        view["quietDevices"] = try await store.quietDevices(
            seenBefore: now() - Int64(hours) * 3_600_000, limit: Self.pageSize
        ).filter { $0.device != AdminController.adminDevice }.map {
            [
                "account": $0.account, "path": Self.pathSegment($0.account), "device": $0.device,
                "lastSeen": $0.lastSeen.map(Self.time) ?? "never",
            ]
        }
        return render("overview", view)
    }

    @Sendable func accounts(_ request: Request, context: SyncRequestContext, signedIn: SignedIn) async throws
        -> Response
    {
        let query = request.uri.queryParameters["q"].map(String.init) ?? ""
        let after = request.uri.queryParameters["after"].map(String.init)
        var found: [AccountSummary] = []
        var more = false
        if query.isEmpty {
            let page = try await store.accounts(after: after, limit: Self.pageSize + 1)
            more = page.count > Self.pageSize
            found = Array(page.prefix(Self.pageSize))
        } else {
            // Names that start with the query are contiguous in byte order, from the query itself on.
            if after == nil, let exact = try await store.accountDetails(name: query) {
                found.append(
                    AccountSummary(
                        name: exact.name, createdAt: exact.createdAt, devices: exact.devices.count,
                        logEntries: exact.logEntries))
            }
            let page = try await store.accounts(after: after ?? query, limit: Self.pageSize + 1)
            let matching = page.prefix { $0.name.hasPrefix(query) }
            more = matching.count > Self.pageSize - found.count
            found += matching.prefix(Self.pageSize - found.count)
        }
        var view = signedIn.view
        view["title"] = "Accounts"
        view["query"] = query
        view["heading"] = query.isEmpty ? "All accounts" : "Accounts starting with “\(query)”"
        view["accounts"] = found.map {
            [
                "name": $0.name, "path": Self.pathSegment($0.name), "devices": $0.devices, "logEntries": $0.logEntries,
                "createdAt": $0.createdAt.map(Self.time) ?? "—",
            ] as [String: Any]
        }
        if more, let last = found.last { view["next"] = Self.queryValue(last.name) }
        return render("accounts", view)
    }

    @Sendable func account(_ request: Request, context: SyncRequestContext, signedIn: SignedIn) async throws
        -> Response
    {
        let name = try NameRules.pathSegment(context, "account")
        guard let (id, details) = try await admin.currentDetails(name: name) else {
            throw AdminController.noAccount(name)
        }
        // The account's state as the server computes it from the log, with the devices' merge.
        var state = ReplicaState()
        var recent: [Change] = []
        try await store.forEachChange(account: id) { change in
            state.apply(change)
            recent.append(change)
            if recent.count > 2 * Self.recentChanges { recent.removeFirst(Self.recentChanges) }
        }
        let path = Self.pathSegment(name)
        var view = signedIn.view
        view["title"] = name
        view["name"] = name
        view["path"] = path
        view["notice"] = request.uri.queryParameters["notice"].map(String.init)
        view["logEntries"] = details.logEntries
        view["logEnd"] = details.logEnd
        view["entriesSinceCompaction"] = details.entriesSinceCompaction
        view["lastCompaction"] = details.lastCompactionAt.map(Self.time) ?? "never"
        view["devices"] = details.devices.map { device in
            var row: [String: Any] = [
                "name": device.name, "path": Self.pathSegment(device.name), "accountPath": path,
                "csrf": signedIn.session.csrf, "highestSeq": device.highestSeq,
                "lastSeen": device.lastSeen.map(Self.time) ?? "never", "live": device.live, "tokens": device.tokens,
            ]
            if let revokedAt = device.revokedAt { row["revokedAt"] = Self.time(revokedAt) }
            row["behind"] = device.pulledThrough.map { "\(max(0, details.logEnd - $0))" } ?? "never pulled"
            return row
        }
        let catalog = try await storedCatalog()
        view["hasCatalog"] = catalog != nil
        let reporting = details.devices.compactMap { device in
            device.context.flatMap(DeviceContext.init(headerValue:)).map { (name: device.name, context: $0) }
        }
        view["tips"] = AccountStateView.tips(
            state, catalog: catalog, now: Double(now()) / 1000, account: details.name, devices: reporting
        )
        .map { row in
            var row = row
            row["accountPath"] = path
            row["tipPath"] = Self.pathSegment(row["tip"] as? String ?? "")
            row["csrf"] = signedIn.session.csrf
            return row
        }
        view["parameters"] = AccountStateView.parameters(state)
        view["events"] = AccountStateView.events(state)
        view["changes"] = recent.suffix(Self.recentChanges).reversed().map(AccountStateView.change)
        return render("account", view)
    }

    @Sendable func export(_ request: Request, context: SyncRequestContext, signedIn: SignedIn) async throws
        -> Response
    {
        try await admin.export(request, context: context)
    }

    @Sendable func compact(_ request: Request, context: SyncRequestContext, signedIn: SignedIn) async throws
        -> Response
    {
        let name = try NameRules.pathSegment(context, "account")
        guard let id = try await store.accountID(named: name) else { throw AdminController.noAccount(name) }
        let dropped = try await LogCompactor(store: store).compact(account: id)
        return Self.redirect(
            "/console/accounts/\(Self.pathSegment(name))?notice="
                + Self.queryValue("Compacted: \(dropped) superseded entries dropped."))
    }

    @Sendable func erasePage(_ request: Request, context: SyncRequestContext, signedIn: SignedIn) async throws
        -> Response
    {
        let name = try NameRules.pathSegment(context, "account")
        guard try await store.accountID(named: name) != nil else { throw AdminController.noAccount(name) }
        var view = signedIn.view
        view["title"] = "Erase \(name)"
        view["name"] = name
        view["path"] = Self.pathSegment(name)
        return render("erase", view)
    }

    @Sendable func erase(_ request: Request, context: SyncRequestContext, signedIn: SignedIn) async throws
        -> Response
    {
        _ = try await admin.erase(request, context: context)
        return Self.redirect("/console/accounts")
    }

    /// Support's reset or dismissal of one tip (``AdminController/changeTip(_:context:)``).
    @Sendable func changeTip(_ request: Request, context: SyncRequestContext, signedIn: SignedIn) async throws
        -> Response
    {
        let name = try NameRules.pathSegment(context, "account")
        let tip = try NameRules.pathSegment(context, "tip")
        guard let text = context.parameters.get("action"), let action = AdminController.TipAction(rawValue: text)
        else { throw SyncError.notFound("no such action; reset or dismiss") }
        _ = try await admin.write(action, tip: tip, account: name, by: signedIn.session.adminKeyName, context.logger)
        let done = action == .reset ? "Reset \(tip): it may show again" : "Dismissed \(tip)"
        return Self.redirect(
            "/console/accounts/\(Self.pathSegment(name))?notice="
                + Self.queryValue("\(done) on every device of the account (as device tipsync-admin)."))
    }

    @Sendable func revoke(_ request: Request, context: SyncRequestContext, signedIn: SignedIn) async throws
        -> Response
    {
        let name = try NameRules.pathSegment(context, "account")
        let device = try NameRules.pathSegment(context, "device")
        _ = try await admin.revokeTokens(request, context: context)
        return Self.redirect(
            "/console/accounts/\(Self.pathSegment(name))?notice="
                + Self.queryValue("Revoked every token of \(device); its open streams ended."))
    }

    @Sendable func tips(_ request: Request, context: SyncRequestContext, signedIn: SignedIn) async throws -> Response {
        var view = signedIn.view
        view["title"] = "Tips"
        let titles = Dictionary(((try await storedCatalog())?.tips ?? []).map { ($0.id, $0.title) }) { first, _ in first
        }
        view["tips"] = try await store.tipUsageTotals().map { totals in
            let highest = max(1, totals.displayBuckets.max() ?? 1)
            var row: [String: Any] = [
                "tip": totals.tip, "accounts": totals.accounts, "displayed": totals.displayedAccounts,
                "tipClosed": totals.invalidated[.tipClosed] ?? 0,
                "actionPerformed": totals.invalidated[.actionPerformed] ?? 0,
                "displayCountExceeded": totals.invalidated[.displayCountExceeded] ?? 0,
                "displayDurationExceeded": totals.invalidated[.displayDurationExceeded] ?? 0,
                "bucketTitle": zip(TipUsageTotals.bucketLabels, totals.displayBuckets).map { "\($0): \($1)" }
                    .joined(separator: ", "),
                "buckets": zip(TipUsageTotals.bucketLabels, totals.displayBuckets).map { label, count in
                    ["label": label, "count": count, "height": count == 0 ? 1 : max(3, 40 * count / highest)]
                        as [String: Any]
                },
                "median": totals.medianMillisecondsToInvalidation.map(Self.duration) ?? "—",
                "usedAfterSeeing": Self.share(totals.usedAfterSeeing, of: totals.displayedAccounts),
                "path": Self.pathSegment(totals.tip),
            ]
            if let title = titles[totals.tip] { row["tipTitle"] = title }
            return row
        }
        return render("tips", view)
    }

    /// One tip: its totals and its daily series (accounts that first displayed it, closed it, used it).
    @Sendable func tip(_ request: Request, context: SyncRequestContext, signedIn: SignedIn) async throws -> Response {
        guard let raw = context.parameters.get("tip"), let id = raw.removingPercentEncoding else {
            throw SyncError.invalidParameter("tip: not a valid percent-encoded UTF-8 id")
        }
        // A tip no account has seen yet (a catalog tip, a typed URL) has an empty page, not an error.
        let totals =
            try await store.tipUsageTotals().first { $0.tip.unicodeScalars.elementsEqual(id.unicodeScalars) }
            ?? TipUsageTotals(
                tip: id, accounts: 0, displayedAccounts: 0, invalidated: [:], displayBuckets: [0, 0, 0, 0, 0],
                medianMillisecondsToInvalidation: nil)
        var view = signedIn.view
        view["title"] = "Tip \(id)"
        view["tip"] = id
        if let title = try await storedCatalog()?.tips.first(where: { $0.id == id })?.title { view["tipTitle"] = title }
        view["accounts"] = totals.accounts
        view["displayed"] = totals.displayedAccounts
        view["usedAfterSeeing"] = Self.share(totals.usedAfterSeeing, of: totals.displayedAccounts)
        let highest = max(1, totals.daily.values.map { max($0.displayed, $0.closed, $0.used) }.max() ?? 1)
        view["days"] = totals.daily.keys.sorted(by: >).map { day -> [String: Any] in
            let counts = totals.daily[day]!
            return [
                "day": day, "displayed": counts.displayed, "closed": counts.closed, "used": counts.used,
                "displayedWidth": 120 * counts.displayed / highest, "closedWidth": 120 * counts.closed / highest,
                "usedWidth": 120 * counts.used / highest,
            ]
        }
        let split = TipUsageByCatalogVersion(
            usage: try await store.tipUsage(tip: totals.tip), versions: try await store.catalogVersions())
        view["versions"] = split.rows.map { row -> [String: Any] in
            [
                "version": row.version == 0 ? "before any catalog" : "\(row.version)", "displayed": row.displayed,
                "closed": row.closed, "used": row.used,
            ]
        }
        return render("tip", view)
    }

    /// The catalog: upload one (refused whole, with the field named), every version with who uploaded
    /// it, when and what changed, and a button that makes an earlier one current again.
    /// How many catalog versions the catalog page describes (the newest).
    static let catalogVersionsShown = 10

    @Sendable func catalogPage(_ request: Request, context: SyncRequestContext, signedIn: SignedIn) async throws
        -> Response
    {
        try await renderCatalog(signedIn, notice: request.uri.queryParameters["notice"].map(String.init))
    }

    /// The catalog page; `removing`: what an upload refused for removing platforms' parts would
    /// remove, named beside the box that replaces the whole catalog anyway.
    func renderCatalog(
        _ signedIn: SignedIn, notice: String? = nil, error: String? = nil, draft: String? = nil,
        removing: [String] = []
    ) async throws -> Response {
        var view = signedIn.view
        if !removing.isEmpty { view["removing"] = removing.joined(separator: ", ") }
        view["title"] = "Catalog"
        if let notice { view["notice"] = notice }
        if let error { view["error"] = error }
        let versions = try await store.catalogVersions()
        view["draft"] = draft ?? versions.first?.text ?? ""
        // The newest versions only: each shown costs a parse of its catalog (a 3.5 MB catalog: ~0.15 s),
        // and a page must not grow with every upload (issue 59, item 6: 16 s to render).
        let shown = CatalogVersionList(versions, limit: Self.catalogVersionsShown)
        if versions.count > shown.versions.count {
            view["olderVersions"] = versions.count - shown.versions.count
        }
        view["versions"] = shown.versions.map { entry -> [String: Any] in
            var row: [String: Any] = [
                "version": entry.version, "uploadedBy": entry.uploadedBy, "at": Self.time(entry.uploadedAt),
                "tips": entry.tips, "summary": entry.summary,
            ]
            if entry.current { row["current"] = true }
            if let restored = entry.restoredFrom { row["restoredFrom"] = restored }
            return row
        }
        var response = render("catalog", view)
        if error != nil { response.status = .badRequest }
        return response
    }

    @Sendable func uploadCatalog(_ request: Request, context: SyncRequestContext, signedIn: SignedIn) async throws
        -> Response
    {
        let text = signedIn.form["catalog"] ?? ""
        let platform = (signedIn.form["platform"] ?? "").trimmingCharacters(in: .whitespaces)
        if !platform.isEmpty {
            // One platform's part (protocol.md §13.11): merged, or removed.
            if let problem = Catalog.platformProblem(platform) {
                return try await renderCatalog(
                    signedIn, error: "Not stored, nothing changed: platform: \(problem)", draft: text)
            }
            let outcome: (version: Int64, tips: Int)?
            do {
                if signedIn.form["remove"] != nil {
                    outcome = try await CatalogComposition(store).removePlatformPart(
                        platform, uploadedBy: signedIn.session.adminKeyName, at: now())
                } else {
                    let part = try Catalog(validating: Array(text.utf8))
                    outcome = try await CatalogComposition(store).mergePlatformPart(
                        part, as: platform, uploadedBy: signedIn.session.adminKeyName, at: now())
                }
            } catch let error as Catalog.ValidationError {
                return try await renderCatalog(
                    signedIn, error: "Not stored, nothing changed: \(error.description)", draft: text)
            } catch let error as CatalogCompositionError {
                return try await renderCatalog(
                    signedIn, error: "Not stored, nothing changed: \(error.description)", draft: text)
            }
            guard let outcome else {
                return try await renderCatalog(signedIn, error: "No catalog is stored: nothing to remove.", draft: text)
            }
            admin.notifier.handle(.catalog)
            let what =
                signedIn.form["remove"] != nil ? "Removed the '\(platform)' part" : "Merged the '\(platform)' part"
            return Self.redirect(
                "/console/catalog?notice="
                    + Self.queryValue(
                        "\(what): version \(outcome.version) (\(outcome.tips) tips); following devices have it now."))
        }
        let catalog: Catalog
        do {
            catalog = try Catalog(validating: Array(text.utf8))
        } catch {
            return try await renderCatalog(
                signedIn, error: "Not stored, nothing changed: \(error.description)", draft: text)
        }
        let version: Int64
        do {
            version = try await admin.storeCatalog(
                text, by: signedIn.session.adminKeyName, replacingParts: signedIn.form["replaceAll"] == "1")
        } catch let error as SyncError where error.code == .invalidParameter {
            // It would change a running experiment (protocol.md §13.12).
            return try await renderCatalog(
                signedIn, error: "Not stored, nothing changed: \(error.message)", draft: text)
        } catch let error as PlatformPartsWouldGo {
            return try await renderCatalog(
                signedIn,
                error: "Not stored, nothing changed: \(error.description). "
                    + "To remove them, tick “Replace the whole catalog” and upload again.",
                draft: text, removing: error.removed)
        }
        return Self.redirect(
            "/console/catalog?notice="
                + Self.queryValue(
                    "Stored version \(version) (\(catalog.tips.count) tips); following devices have it now."))
    }

    @Sendable func restoreCatalog(_ request: Request, context: SyncRequestContext, signedIn: SignedIn) async throws
        -> Response
    {
        let old = try await admin.storedVersion(context)
        let version: Int64
        do {
            version = try await admin.storeCatalog(old.text, by: signedIn.session.adminKeyName, restoring: old.version)
        } catch let error as SyncError where error.code == .invalidParameter {
            return try await renderCatalog(
                signedIn, error: "Not restored, nothing changed: \(error.message)", draft: nil)
        }
        return Self.redirect(
            "/console/catalog?notice=" + Self.queryValue("Restored version \(old.version) as version \(version)."))
    }

    /// `part` of `whole` as a percentage with its counts: "40% (2 of 5)"; "—" when `whole` is 0.
    static func share(_ part: Int, of whole: Int) -> String {
        guard whole > 0 else { return "—" }
        return "\(Int((Double(part) * 100 / Double(whole)).rounded()))% (\(part) of \(whole))"
    }

    // MARK: Helpers

    /// The stored catalog; one that no longer reads (a newer format) is shown as none.
    func storedCatalog() async throws -> Catalog? {
        guard let text = try await store.catalogJSON() else { return nil }
        return try? Catalog(validating: Array(text.utf8))
    }

    func render(_ template: String, _ view: [String: Any]) -> Response {
        let html = library.render(view, withTemplate: template) ?? ""
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        // The console's security headers are SecurityHeadersMiddleware's, on every answer.
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    static func redirect(_ location: String) -> Response {
        var headers = HTTPFields()
        headers[.location] = location
        return Response(status: .seeOther, headers: headers)
    }

    /// The fields of an `application/x-www-form-urlencoded` body (at most 64 KiB).
    static func form(_ request: Request) async throws -> [String: String] {
        let body = try await request.body.collect(upTo: 65536)
        var fields: [String: String] = [:]
        for pair in String(buffer: body).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ text: Substring) -> String {
                text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(text)
            }
            fields[decode(parts[0])] = parts.count > 1 ? decode(parts[1]) : ""
        }
        return fields
    }

    private static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// A name as one percent-encoded path segment (names may hold `/`, `?`, spaces, anything).
    static func pathSegment(_ name: String) -> String {
        name.addingPercentEncoding(withAllowedCharacters: unreserved) ?? name
    }

    static func queryValue(_ text: String) -> String { pathSegment(text) }

    static func time(_ milliseconds: Int64) -> String {
        let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate, .withTime, .withColonSeparatorInTime, .withSpaceBetweenDateAndTime]
        return formatter.string(from: date) + " UTC"
    }

    static func duration(_ milliseconds: Int64) -> String {
        let seconds = Double(milliseconds) / 1000
        if seconds < 120 { return String(format: "%.0f s", seconds) }
        if seconds < 7200 { return String(format: "%.0f min", seconds / 60) }
        if seconds < 172_800 { return String(format: "%.1f h", seconds / 3600) }
        return String(format: "%.1f days", seconds / 86400)
    }

    static func bytes(_ count: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(count)
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(count) B" : String(format: "%.1f %@", value, units[unit])
    }
}
