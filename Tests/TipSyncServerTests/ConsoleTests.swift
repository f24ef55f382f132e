import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Mustache
import Testing
import TipSync
import TipSyncServerTestSupport
import TipSyncTestSupport

@testable import TipSyncDeviceService
@testable import TipSyncOperatorService
@testable import TipSyncServer

/// `/console`, in process: every route, the login, the redirect without a session, the CSRF check,
/// and the tip usage behind the tips page (after compaction, erasure and restore).
@Suite struct ConsoleTests {
    struct Console {
        let fixture: ServerFixture
        let key: String

        static func make() async throws -> Console {
            let fixture = try await ServerFixture.make(devices: ["phone", "laptop"])
            return Console(
                fixture: fixture,
                key: try await CredentialIssuance(fixture.store).createAdminKey(name: "ops", at: 1).key)
        }

        func app() -> some ApplicationProtocol {
            var configuration = ServerConfiguration()
            configuration.console = true
            return fixture.app(configuration: configuration)
        }

        /// Pushes a display of `welcome` and its invalidation (`tipClosed`) from the phone.
        func seed(_ client: some TestClientProtocol) async throws {
            let now = UInt64(Date().timeIntervalSince1970 * 1000)
            let changes = [
                change(
                    "phone", 1,
                    .display(tip: "welcome", epoch: nil, count: 2, duration: 3.5, lastDisplayed: Int64(now)), ms: now),
                change("phone", 2, .eligibility(tip: "welcome", state: .invalidated(.tipClosed)), ms: now + 60_000),
                change("phone", 3, .parameter(id: "isPro", value: .bool(true)), ms: now),
            ]
            try await client.execute(
                uri: "/v1/push", method: .post, headers: fixture.headers("phone"),
                body: try body(PushRequest(changes: changes))
            ) { #expect($0.status == .ok) }
        }
    }

    /// Logs in; the session cookie and the page's CSRF token.
    static func login(_ client: some TestClientProtocol, key: String) async throws -> (cookie: String, csrf: String) {
        var headers = HTTPFields()
        headers[.contentType] = "application/x-www-form-urlencoded"
        let cookie = try await client.execute(
            uri: "/console/login", method: .post, headers: headers, body: ByteBuffer(string: "key=\(key)")
        ) { response -> String in
            #expect(response.status == .seeOther)
            #expect(response.headers[.location] == "/console")
            let setCookie = try #require(response.headers[.setCookie])
            #expect(setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Strict"))
            #expect(!setCookie.contains("Secure"))  // plain HTTP here
            return String(setCookie.prefix { $0 != ";" })
        }
        let page = try await get(client, "/console", cookie: cookie)
        let csrf = try #require(page.firstMatch(of: /name="csrf" value="([^"]+)"/)?.1)
        return (cookie, String(csrf))
    }

    static func get(_ client: some TestClientProtocol, _ uri: String, cookie: String?) async throws -> String {
        var headers = HTTPFields()
        if let cookie { headers[.cookie] = cookie }
        return try await client.execute(uri: uri, method: .get, headers: headers) { response in
            #expect(response.status == .ok, "\(uri)")
            #expect(response.headers[.contentType] == "text/html; charset=utf-8")
            // Table cells carry their column's name for the phone layout; the checks read the rest.
            return String(buffer: response.body).replacing(#/ data-label="[^"]*"/#, with: "")
        }
    }

    static func post(_ client: some TestClientProtocol, _ uri: String, cookie: String, form: String) async throws
        -> (status: HTTPResponse.Status, location: String?)
    {
        var headers = HTTPFields()
        headers[.cookie] = cookie
        headers[.contentType] = "application/x-www-form-urlencoded"
        return try await client.execute(uri: uri, method: .post, headers: headers, body: ByteBuffer(string: form)) {
            ($0.status, $0.headers[.location])
        }
    }

    /// Without the flag there is no console, and the 404 says how to turn it on (issue 31, item 8:
    /// it was a bare "Not Found").
    @Test func withoutTheFlagThereIsNoConsoleAndThe404SaysHowToTurnItOn() async throws {
        let console = try await Console.make()
        try await console.fixture.app().test(.router) { client in
            for uri in ["/console", "/console/login", "/console/accounts/alice"] {
                try await client.execute(uri: uri, method: .get) { response in
                    #expect(response.status == .notFound)
                    let error = try decode(ErrorBody.self, response.body).error
                    #expect(error.code == "not_found")
                    #expect(error.message.contains("--console"), "\(uri): \(error.message)")
                }
            }
            try await client.execute(uri: "/consoles", method: .get) { response in
                #expect(response.status == .notFound)
                let message = try decode(ErrorBody.self, response.body).error.message
                #expect(!message.contains("--console"))
            }
        }
    }

    /// The console's 404 for an unknown account was JSON without `nosniff`, CSP or framing headers
    /// (issue 59, item 6): every console answer carries them now, pages and errors alike, and every
    /// answer of the server carries `nosniff`.
    @Test func everyConsoleAnswerCarriesTheSecurityHeaders() async throws {
        let console = try await Console.make()
        try await console.app().test(.router) { client in
            let (cookie, _) = try await Self.login(client, key: console.key)
            for (uri, status) in [
                ("/console/accounts/nobody", HTTPResponse.Status.notFound), ("/console/accounts/alice", .ok),
                ("/console/login", .ok),
            ] {
                try await client.execute(uri: uri, method: .get, headers: [.cookie: cookie]) { response in
                    #expect(response.status == status, "\(uri)")
                    #expect(response.headers[.init("X-Content-Type-Options")!] == "nosniff", "\(uri)")
                    #expect(response.headers[.init("X-Frame-Options")!] == "DENY", "\(uri)")
                    #expect(
                        response.headers[.init("Content-Security-Policy")!]?.contains("frame-ancestors 'none'") == true,
                        "\(uri)")
                    #expect(response.headers[.cacheControl] == "no-store", "\(uri)")
                }
            }
            try await client.execute(uri: "/health", method: .get) { response in
                #expect(response.headers[.init("X-Content-Type-Options")!] == "nosniff")
                #expect(response.headers[.init("X-Frame-Options")!] == nil)
            }
        }
    }

    @Test func everyPageRedirectsToTheLoginPageWithoutASession() async throws {
        let console = try await Console.make()
        try await console.app().test(.router) { client in
            for uri in [
                "/console", "/console/accounts", "/console/accounts/alice", "/console/tips",
                "/console/accounts/alice/export", "/console/accounts/alice/erase",
            ] {
                try await client.execute(uri: uri, method: .get) { response in
                    #expect(response.status == .seeOther, "\(uri)")
                    #expect(response.headers[.location] == "/console/login", "\(uri)")
                }
            }
            var headers = HTTPFields()
            headers[.cookie] = "tipsync_console=forged"
            try await client.execute(uri: "/console/accounts/alice/compact", method: .post, headers: headers) {
                #expect($0.status == .seeOther)
            }
            let page = try await Self.get(client, "/console/login", cookie: nil)
            #expect(page.contains(#"name="key""#) && !page.contains("Log out"))
        }
    }

    @Test func aWrongKeyIsRefusedAndARevokedKeyEndsItsSessions() async throws {
        let console = try await Console.make()
        try await console.app().test(.router) { client in
            var headers = HTTPFields()
            headers[.contentType] = "application/x-www-form-urlencoded"
            try await client.execute(
                uri: "/console/login", method: .post, headers: headers, body: ByteBuffer(string: "key=tsa_nope")
            ) { response in
                #expect(response.status == .unauthorized)
                #expect(response.headers[.setCookie] == nil)
                #expect(String(buffer: response.body).contains("unknown or revoked"))
            }
            let (cookie, _) = try await Self.login(client, key: console.key)
            #expect(try await console.fixture.store.revokeAdminKey(name: "ops"))
            var sessionHeaders = HTTPFields()
            sessionHeaders[.cookie] = cookie
            try await client.execute(uri: "/console", method: .get, headers: sessionHeaders) {
                #expect($0.status == .seeOther)
            }
        }
    }

    @Test func formsWithoutTheSessionsCSRFTokenAreRefused() async throws {
        let console = try await Console.make()
        try await console.app().test(.router) { client in
            let (cookie, csrf) = try await Self.login(client, key: console.key)
            for form in ["", "csrf=wrong", "csrf=\(csrf)x"] {
                let refused = try await Self.post(
                    client, "/console/accounts/alice/devices/phone/revoke", cookie: cookie, form: form)
                #expect(refused.status == .forbidden)
            }
            // Nothing was revoked.
            try await client.execute(uri: "/v1/pull", method: .get, headers: console.fixture.headers("phone")) {
                #expect($0.status == .ok)
            }
            let done = try await Self.post(
                client, "/console/accounts/alice/devices/phone/revoke", cookie: cookie, form: "csrf=\(csrf)")
            #expect(done.status == .seeOther && done.location?.hasPrefix("/console/accounts/alice?notice=") == true)
            try await client.execute(uri: "/v1/pull", method: .get, headers: console.fixture.headers("phone")) {
                #expect($0.status == .unauthorized)
            }
        }
    }

    @Test func theAccountPageShowsTheMergedStateItsDevicesAndRecentChanges() async throws {
        let console = try await Console.make()
        try await console.app().test(.router) { client in
            try await console.seed(client)
            try await client.execute(uri: "/v1/pull?limit=2", method: .get, headers: console.fixture.headers("laptop"))
            {
                #expect($0.status == .ok)
            }
            let (cookie, _) = try await Self.login(client, key: console.key)
            let page = try await Self.get(client, "/console/accounts/alice", cookie: cookie)
            // The laptop pulled 2 of the 3 entries; the phone never pulled.
            #expect(
                page.contains(#"<td class="behind">1</td>"#) && page.contains(#"<td class="behind">never pulled</td>"#))
            #expect(page.contains("invalidated · tipClosed"))
            #expect(page.contains(#"<td class="mono">phone at "#))  // the writer of the invalidation
            #expect(page.contains("phone: 2 (3.5 s) · total 2 (3.5 s)"))
            #expect(page.contains("<code>isPro</code>") && page.contains(">true<"))
            #expect(page.contains("invalidate welcome (tipClosed)"))
            #expect(page.contains(#"data-device="laptop""#))
            // Newest first.
            let newest = try #require(page.range(of: "parameter isPro = true"))
            let oldest = try #require(page.range(of: "display welcome: count 2"))
            #expect(newest.lowerBound < oldest.lowerBound)

            let accounts = try await Self.get(client, "/console/accounts?q=al", cookie: cookie)
            #expect(accounts.contains(#"<a href="/console/accounts/alice">alice</a>"#))
            let none = try await Self.get(client, "/console/accounts?q=zz", cookie: cookie)
            #expect(none.contains("No account matches."))
            let overview = try await Self.get(client, "/console", cookie: cookie)
            #expect(overview.contains(#"id="accounts">1<"#) && overview.contains(#"id="devices">2<"#))
            #expect(overview.contains("1 in all"))  // one push in the last 24 hours
            var headers = HTTPFields()
            headers[.cookie] = cookie
            try await client.execute(uri: "/console/accounts/alice/export", method: .get, headers: headers) {
                #expect($0.status == .ok)
                #expect(String(buffer: $0.body).split(separator: "\n").count == 3)
            }
        }
    }

    @Test func compactingAndErasingFromTheConsole() async throws {
        let console = try await Console.make()
        try await console.app().test(.router) { client in
            try await console.seed(client)
            let (cookie, csrf) = try await Self.login(client, key: console.key)
            let compacted = try await Self.post(
                client, "/console/accounts/alice/compact", cookie: cookie, form: "csrf=\(csrf)")
            #expect(compacted.status == .seeOther)
            let page = try await Self.get(client, compacted.location ?? "", cookie: cookie)
            #expect(page.contains("Compacted: 0 superseded entries dropped."))
            let confirm = try await Self.get(client, "/console/accounts/alice/erase", cookie: cookie)
            #expect(confirm.contains(#"id="confirm-erase""#))
            let erased = try await Self.post(
                client, "/console/accounts/alice/erase", cookie: cookie, form: "csrf=\(csrf)")
            #expect(erased.status == .seeOther && erased.location == "/console/accounts")
            #expect(try await console.fixture.store.accountID(named: "alice") == nil)
            let loggedOut = try await Self.post(client, "/console/logout", cookie: cookie, form: "csrf=\(csrf)")
            #expect(loggedOut.status == .seeOther && loggedOut.location == "/console/login")
            var headers = HTTPFields()
            headers[.cookie] = cookie
            try await client.execute(uri: "/console", method: .get, headers: headers) {
                #expect($0.status == .seeOther)
            }
        }
    }

    @Test func theTipsPageCountsAccountsByHowTheirTipEnded() async throws {
        let console = try await Console.make()
        try await console.app().test(.router) { client in
            try await console.seed(client)
            try await TipUsageDerivation(console.fixture.store).summarizeTipUsage(account: console.fixture.accountID)
            let (cookie, _) = try await Self.login(client, key: console.key)
            let page = try await Self.get(client, "/console/tips", cookie: cookie)
            #expect(page.contains("<code>welcome</code></a></td><td>1</td><td>1</td>"))
            #expect(page.contains(#"<td class="closed">1</td><td class="used">0</td>"#))
            #expect(page.contains("<td>60 s</td>"))  // first display → invalidation
            #expect(page.contains(#"<td class="used-after">0% (0 of 1)</td>"#))
            // The tip's own page: its daily series (the phone's display and close, today, UTC).
            #expect(page.contains(#"<a href="/console/tips/welcome">"#))
            let tip = try await Self.get(client, "/console/tips/welcome", cookie: cookie)
            let today = TipUsageCounters.day(Int64(Date().timeIntervalSince1970 * 1000))
            let tomorrow = TipUsageCounters.day(Int64(Date().timeIntervalSince1970 * 1000) + 60_000)
            #expect(tip.contains("<td>\(today)</td>") || tip.contains("<td>\(tomorrow)</td>"), "\(tip)")
            #expect(tip.contains("used after seeing: 0% (0 of 1)"))
            // No catalog uploaded: everything counts for "before any catalog".
            #expect(tip.contains(#"<td>before any catalog</td><td>1</td>"#), "\(tip)")
            let unseen = try await Self.get(client, "/console/tips/nobody-saw-it", cookie: cookie)
            #expect(unseen.contains("No display, close or use recorded yet."))
            // The figures are kept between views, and recomputed once the summary changes.
            _ = try await console.fixture.store.eraseAccount(name: "alice", at: 1)
            let after = try await Self.get(client, "/console/tips", cookie: cookie)
            #expect(after.contains("No tip has been seen yet."))
        }
    }

    /// The tip usage is kept per account as pushes arrive: a compaction that drops the change that
    /// reported the first display keeps it, an erasure removes the account from every count, and a
    /// restored backup brings back its own consistent usage.
    @Test(arguments: Backend.allCases)
    func tipUsageSurvivesCompactionAndLeavesWithErasure(_ backend: Backend) async throws {
        try await backend.withStore { store in
            let account = try await store.createAccount(name: "alice")
            _ = try await CredentialIssuance(store).createToken(accountName: "alice", device: "phone")
            let phone = DeviceIdentity(accountID: account, device: "phone")
            let first: Int64 = 1_800_000_000_000
            func display(_ seq: Int64, count: Int64) -> Change {
                change(
                    "phone", seq,
                    .display(
                        tip: "upgrade", epoch: nil, count: count, duration: Double(seq), lastDisplayed: first + seq),
                    ms: UInt64(first + seq))
            }
            _ = try await store.push([display(1, count: 1), display(2, count: 2), display(3, count: 3)], from: phone)
            #expect(try await store.accountsWithNewChanges(after: 0, limit: 10) == [account])
            try await TipUsageDerivation(store).summarizeTipUsage(account: account)
            #expect(try await store.accountsWithNewChanges(after: 0, limit: 10).isEmpty)
            _ = try await store.push(
                [
                    change(
                        "phone", 4, .eligibility(tip: "upgrade", state: .invalidated(.actionPerformed)),
                        ms: UInt64(first + 5000))
                ],
                from: phone)
            // displays 1 and 2 are superseded
            #expect(try await LogCompactor(store: store).compact(account: account) == 2)
            // from the compacted log, as the job does
            try await TipUsageDerivation(store).summarizeTipUsage(account: account)
            let usage = try await store.tipUsage(account: account)
            #expect(
                usage == [
                    TipUsage(
                        tip: "upgrade", reason: .actionPerformed, displays: 3, firstDisplayAt: first + 1,
                        invalidatedAt: first + 5000)
                ])
            let totals = try await store.tipUsageTotals()
            #expect(totals.map(\.tip) == ["upgrade"])
            let upgrade = try #require(totals.first)
            #expect(
                upgrade.accounts == 1 && upgrade.displayedAccounts == 1 && upgrade.invalidated == [.actionPerformed: 1])
            #expect(upgrade.displayBuckets == [0, 0, 1, 0, 0])
            // Kept as quarter-octave buckets: within 10% of the exact 4,999 ms.
            let median = try #require(upgrade.medianMillisecondsToInvalidation)
            #expect(abs(median - 4999) < 500, "\(median)")
            _ = try await store.eraseAccount(name: "alice", at: first)
            #expect(try await store.tipUsageTotals().isEmpty)
            #expect(try await store.saveTipUsage(usage, account: account, through: 9) == false)
            #expect(try await store.tipUsageTotals().isEmpty)
        }
    }

    /// The per-tip totals are kept by deltas: summarizing an account again replaces its share
    /// instead of adding to it, on both backends.
    @Test(arguments: Backend.allCases)
    func tipTotalsAreReplacedNotAddedWhenAnAccountIsSummarizedAgain(_ backend: Backend) async throws {
        try await backend.withStore { store in
            var identities: [DeviceIdentity] = []
            for name in ["ann", "bob", "cyd"] {
                let id = try await store.createAccount(name: name)
                _ = try await CredentialIssuance(store).createToken(accountName: name, device: "phone")
                identities.append(DeviceIdentity(accountID: id, device: "phone"))
            }
            let t: UInt64 = 1_800_000_000_000
            for identity in identities {
                _ = try await store.push(
                    [
                        change(
                            "phone", 1,
                            .display(tip: "tip", epoch: nil, count: 1, duration: 1, lastDisplayed: Int64(t)), ms: t)
                    ],
                    from: identity)
                try await TipUsageDerivation(store).summarizeTipUsage(account: identity.accountID)
            }
            var totals = try #require(try await store.tipUsageTotals().first)
            #expect(totals.accounts == 3 && totals.displayedAccounts == 3 && totals.invalidated.isEmpty)
            #expect(totals.displayBuckets == [0, 3, 0, 0, 0])
            // Ann closes it after 10 s, Bob uses the feature after 20 s and sees it 4 times in all.
            _ = try await store.push(
                [change("phone", 2, .eligibility(tip: "tip", state: .invalidated(.tipClosed)), ms: t + 10_000)],
                from: identities[0])
            _ = try await store.push(
                [
                    change(
                        "phone", 2,
                        .display(tip: "tip", epoch: nil, count: 4, duration: 2, lastDisplayed: Int64(t) + 5), ms: t + 5),
                    change("phone", 3, .eligibility(tip: "tip", state: .invalidated(.actionPerformed)), ms: t + 20_000),
                ], from: identities[1])
            for identity in identities {
                try await TipUsageDerivation(store).summarizeTipUsage(account: identity.accountID)
            }
            // nothing new: no change
            try await TipUsageDerivation(store).summarizeTipUsage(account: identities[0].accountID)
            totals = try #require(try await store.tipUsageTotals().first)
            #expect(totals.accounts == 3 && totals.displayedAccounts == 3)
            #expect(totals.invalidated == [.tipClosed: 1, .actionPerformed: 1])
            #expect(totals.displayBuckets == [0, 2, 0, 1, 0])
            let median = try #require(totals.medianMillisecondsToInvalidation)
            #expect((9_000...22_000).contains(median), "\(median)")
            _ = try await store.eraseAccount(name: "bob", at: 1)
            totals = try #require(try await store.tipUsageTotals().first)
            #expect(totals.accounts == 2 && totals.invalidated == [.tipClosed: 1])
            #expect(totals.displayBuckets == [0, 2, 0, 0, 0])
        }
    }

    /// One background pass reaches every account whose log grew, page after page in id order.
    @Test func oneSummarizerPassReachesEveryAccountWithNewChanges() async throws {
        let fixture = try await ServerFixture.make()
        for index in 0..<150 {
            let name = "user-\(index)"
            let id = try await fixture.store.createAccount(name: name)
            _ = try await CredentialIssuance(fixture.store).createToken(accountName: name, device: "phone")
            _ = try await fixture.store.push(
                [change("phone", 1, .eligibility(tip: "t", state: .invalidated(.tipClosed)))],
                from: DeviceIdentity(accountID: id, device: "phone"))
        }
        let summarizer = TipUsageSummarizer(
            store: fixture.store, interval: .seconds(2), logger: Logger(label: "test"))
        #expect(try await summarizer.summarizePending() == 150)
        #expect(try await fixture.store.accountsWithNewChanges(after: 0, limit: 10).isEmpty)
        #expect(try await fixture.store.tipUsageTotals().first?.invalidated == [.tipClosed: 150])
    }

    @Test func aRestoredBackupCarriesItsOwnTipUsage() async throws {
        let directory = Scratch.path("tipsync-console")
        let store = try SQLiteSyncStore(path: directory.appendingPathComponent("server.sqlite").path)
        try await store.migrate()
        let account = try await store.createAccount(name: "alice")
        _ = try await CredentialIssuance(store).createToken(accountName: "alice", device: "phone")
        let phone = DeviceIdentity(accountID: account, device: "phone")
        _ = try await store.push(
            [change("phone", 1, .eligibility(tip: "welcome", state: .invalidated(.tipClosed)))], from: phone)
        try await TipUsageDerivation(store).summarizeTipUsage(account: account)
        let backup = directory.appendingPathComponent("backup.sqlite").path
        try store.backup(to: backup)
        _ = try await store.eraseAccount(name: "alice", at: 1)
        let restored = try SQLiteSyncStore(path: backup)
        try await restored.migrate()
        #expect(try await restored.tipUsageTotals().map(\.tip) == ["welcome"])
        #expect(try await restored.accountsWithNewChanges(after: 0, limit: 10).isEmpty)
    }

    static let exampleCatalog = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Examples/catalog.json")

    @Test func aStoredCatalogGivesTitlesAndEachTipsStatusNow() async throws {
        let console = try await Console.make()
        try await console.app().test(.router) { client in
            var admin = HTTPFields()
            admin[.authorization] = "Bearer \(console.key)"
            try await client.execute(uri: "/admin/v1/catalog", method: .get, headers: admin) {
                #expect($0.status == .notFound)
            }
            // A bad catalog is refused whole, naming the field in protocol terms.
            try await client.execute(
                uri: "/admin/v1/catalog", method: .put, headers: admin,
                body: ByteBuffer(string: #"{"tips":[{"id":"a","title":"A","rules":[{"==":[{"param":"nope"},1]}]}]}"#)
            ) { response in
                #expect(response.status == .badRequest)
                let error = try decode(ErrorBody.self, response.body).error
                #expect(error.code == "invalid_parameter" && error.message.contains("nope"), "\(error.message)")
            }
            let catalog = try String(contentsOf: Self.exampleCatalog, encoding: .utf8)
            try await client.execute(
                uri: "/admin/v1/catalog", method: .put, headers: admin, body: ByteBuffer(string: catalog)
            ) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body) == #"{"tips":4,"version":1}"#)
            }
            try await client.execute(uri: "/admin/v1/catalog", method: .get, headers: admin) {
                #expect(String(buffer: $0.body) == catalog)
            }
            try await console.seed(client)
            try await TipUsageDerivation(console.fixture.store).summarizeTipUsage(account: console.fixture.accountID)
            let (cookie, _) = try await Self.login(client, key: console.key)
            let page = try await Self.get(client, "/console/accounts/alice", cookie: cookie)
            #expect(page.contains("Welcome to Yards") && page.contains("Go Pro"))
            // welcome, with why (protocol.md §13.9): who dismissed it.
            #expect(
                page.contains(
                    #"<td class="status">invalidated (tipClosed)<br><span class="muted why">invalidated (tipClosed) by device &#39;phone&#39; at 20"#
                ), "\(page)")
            // upgrade's rules hold (plan is free, no trial), but the catalog's display frequency is
            // daily and welcome was displayed a moment ago: pending, as on every device — and it says so.
            let upgrade = try #require(page.range(of: "<code>upgrade</code>"))
            #expect(
                page[upgrade.upperBound...].contains(
                    #"<td class="status">pending<br><span class="muted why">display frequency holds it until "#))
            let tips = try await Self.get(client, "/console/tips", cookie: cookie)
            #expect(tips.contains("Welcome to Yards"))
        }
    }

    /// The same pages against PostgreSQL as against SQLite.
    @Test(arguments: Backend.allCases)
    func theConsoleWorksOnBothBackends(_ backend: Backend) async throws {
        try await backend.withStore { store in
            let account = try await store.createAccount(name: "alice")
            _ = try await CredentialIssuance(store).createToken(accountName: "alice", device: "phone")
            let key = try await CredentialIssuance(store).createAdminKey(name: "ops", at: 1).key
            let now = UInt64(Date().timeIntervalSince1970 * 1000)
            _ = try await store.push(
                [
                    change(
                        "phone", 1,
                        .display(tip: "welcome", epoch: nil, count: 1, duration: 2, lastDisplayed: Int64(now)),
                        ms: now),
                    change(
                        "phone", 2, .eligibility(tip: "welcome", state: .invalidated(.actionPerformed)), ms: now + 1),
                ], from: DeviceIdentity(accountID: account, device: "phone"))
            try await TipUsageDerivation(store).summarizeTipUsage(account: account)
            var configuration = ServerConfiguration()
            configuration.console = true
            let app = buildApplication(
                configuration: configuration.onAnyPort, dependencies: ServerDependencies(store: store))
            try await app.test(.router) { client in
                let (cookie, _) = try await Self.login(client, key: key)
                let overview = try await Self.get(client, "/console", cookie: cookie)
                #expect(overview.contains(#"id="accounts">1<"#) && overview.contains(#"id="devices">1<"#))
                let page = try await Self.get(client, "/console/accounts/alice", cookie: cookie)
                #expect(page.contains("invalidated · actionPerformed"))
                let tips = try await Self.get(client, "/console/tips", cookie: cookie)
                #expect(tips.contains(#"<td class="closed">0</td><td class="used">1</td>"#))
            }
        }
    }

    /// The catalog page composes one catalog from platforms' parts (issue 56, protocol.md §13.11): a
    /// web catalog, then a Swift export merged as the `ios` part — the web tips stay — then removed.
    @Test func theCatalogPageMergesAndRemovesAPlatformsPart() async throws {
        let console = try await Console.make()
        try await console.app().test(.router) { client in
            let (cookie, csrf) = try await Self.login(client, key: console.key)
            func post(_ text: String, platform: String = "", remove: Bool = false) async throws -> String? {
                let encoded = text.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
                return try await Self.post(
                    client, "/console/catalog", cookie: cookie,
                    form: "csrf=\(csrf)&catalog=\(encoded)&platform=\(platform)" + (remove ? "&remove=1" : "")
                ).location?.removingPercentEncoding
            }
            _ = try await post(
                #"{"tips": [{"id": "welcome", "title": "Welcome"}, {"id": "search", "title": "Search", "platforms": ["web"]}]}"#
            )
            let merged = try await post(
                #"{"displayFrequency": "daily", "tips": [{"id": "onboarding", "title": "Swipe"}]}"#, platform: "ios")
            #expect(merged?.contains("Merged the 'ios' part: version 2 (3 tips)") == true, "\(merged ?? "")")
            let stored = try #require(try await console.fixture.store.catalogJSON())
            let catalog = try Catalog(validating: Array(stored.utf8))
            #expect(catalog.tips.map(\.id) == ["welcome", "search", "onboarding"])
            #expect(catalog.forPlatform("web").displayFrequency == nil)
            #expect(catalog.forPlatform("ios").displayFrequency == .daily)
            let clash = try await post(#"{"tips": [{"id": "welcome", "title": "Clash"}]}"#, platform: "ios")
            #expect(clash == nil, "refused: the page is shown again, not redirected")
            let removed = try await post("", platform: "ios", remove: true)
            #expect(removed?.contains("Removed the 'ios' part: version 3 (2 tips)") == true, "\(removed ?? "")")
            let page = try await Self.get(client, "/console/catalog", cookie: cookie)
            #expect(page.contains(#"id="catalog-platform""#) && page.contains(#"id="remove-platform""#))
        }
    }

    /// The catalog page (issue 33): upload with errors naming the field, versions with diffs, restore.
    @Test func theCatalogPageUploadsListsAndRestoresVersions() async throws {
        let console = try await Console.make()
        try await console.app().test(.router) { client in
            let (cookie, csrf) = try await Self.login(client, key: console.key)
            #expect(try await Self.get(client, "/console/catalog", cookie: cookie).contains("No catalog uploaded yet."))
            func upload(_ text: String) async throws -> (status: HTTPResponse.Status, location: String?) {
                let encoded = text.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
                return try await Self.post(
                    client, "/console/catalog", cookie: cookie, form: "csrf=\(csrf)&catalog=\(encoded)")
            }
            // Refused whole, naming the field; what was typed stays in the form.
            let bad = #"{"tips": [{"id": "a", "title": "A", "rules": [{"param": "nope"}]}]}"#
            var headers = HTTPFields()
            headers[.cookie] = cookie
            headers[.contentType] = "application/x-www-form-urlencoded"
            let page = try await client.execute(
                uri: "/console/catalog", method: .post, headers: headers,
                body: ByteBuffer(
                    string: "csrf=\(csrf)&catalog=\(bad.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)")
            ) { response in
                #expect(response.status == .badRequest)
                return String(buffer: response.body)
            }
            #expect(page.contains("Not stored, nothing changed: tips[0].rules[0]: reads parameter"))
            #expect(page.contains("&quot;nope&quot;") || page.contains("nope"))
            #expect(try await console.fixture.store.catalogVersions().isEmpty)

            let v1 = #"{"tips": [{"id": "welcome", "title": "Welcome"}]}"#
            let v2 = #"{"tips": [{"id": "welcome", "title": "Hello"}, {"id": "new", "title": "New"}]}"#
            var result = try await upload(v1)
            #expect(result.status == .seeOther && result.location?.hasPrefix("/console/catalog?notice=Stored") == true)
            result = try await upload(v2)
            let list = try await Self.get(client, "/console/catalog", cookie: cookie)
            #expect(
                list.contains("2 <strong>(current)</strong>") && list.contains("added new; changed welcome (title)"))
            #expect(list.contains("<td>ops</td>"))
            #expect(list.contains(#"data-version="1""#) && !list.contains(#"data-version="2""#))
            result = try await Self.post(
                client, "/console/catalog/versions/1/restore", cookie: cookie, form: "csrf=\(csrf)")
            #expect(result.location?.contains("Restored") == true)
            #expect(try await console.fixture.store.catalogJSON() == v1)
            let after = try await Self.get(client, "/console/catalog", cookie: cookie)
            #expect(after.contains("3 <strong>(current)</strong><br><span class=\"muted\">restores 1</span>"))
        }
    }

    /// The catalog page describes the newest 10 versions and says how many more there are: before,
    /// it parsed and diffed every version ever uploaded on each view (issue 59, item 6: 16.3 s with
    /// 3.5 MB catalogs). A diff's summary names ten tips per list and counts the rest.
    @Test func theCatalogPageDescribesTheNewestVersionsOnly() async throws {
        let console = try await Console.make()
        for version in 1...25 {
            let tips = (0..<(version == 1 ? 30 : 1)).map { #"{"id": "t\#($0)", "title": "V\#(version)"}"# }
            _ = try await CatalogComposition(console.fixture.store).putCatalogJSON(
                #"{"tips": [\#(tips.joined(separator: ","))]}"#)
        }
        try await console.app().test(.router) { client in
            let (cookie, _) = try await Self.login(client, key: console.key)
            let page = try await Self.get(client, "/console/catalog", cookie: cookie)
            #expect(page.contains("25 <strong>(current)</strong>"))
            #expect(page.contains(#"data-version="16""#) && !page.contains(#"data-version="15""#))
            #expect(page.contains("15 older versions are not shown here"))
        }
        let first = CatalogDiff(
            from: nil,
            to: try Catalog(validating: Array(try await console.fixture.store.catalogVersions().last!.text.utf8)))
        #expect(first.tipsAdded.count == 30)
        #expect(first.summary == "added t0, t1, t2, t3, t4, t5, t6, t7, t8, t9 … and 20 more")
    }

    @Test func everyTemplateParses() throws {
        let library = try ConsoleTemplates.library()
        for (name, _) in ConsoleTemplates.all { #expect(library.getTemplate(named: name) != nil) }
    }
}
