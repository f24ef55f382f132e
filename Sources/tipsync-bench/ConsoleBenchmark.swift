import ArgumentParser
import Foundation
import Hummingbird
import TipSyncCore
import TipSyncServer
import TipSyncTestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// How fast the console's pages load on a big database: N accounts, M log entries in all (tips
/// displayed and closed or used, parameters, donations), every account's tip usage derived; then
/// the overview, the tips page and an account page, each loaded repeatedly over HTTP.
struct ConsoleBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "console", abstract: "Time the console's pages on a database of N accounts and M log entries.")

    @Option(help: "Accounts.") var accounts = 100_000
    @Option(help: "Log entries in all (spread evenly over the accounts).") var entries = 10_000_000
    @Option(help: "Loads of each page.") var loads = 20
    @Option(help: "An existing SQLite file built by an earlier run (skips building).") var database: String?
    @Option(help: "Port for the in-process server.") var port = 18_480

    func run() async throws {
        let path =
            database
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("tipsync-console-\(UUID()).sqlite").path
        let store = try SQLiteSyncStore(path: path)
        try await store.migrate()
        if database == nil {
            try await build(store)
            print("database: \(path)")
        }
        let key = try await CredentialIssuance(store).createAdminKey(
            name: "bench-\(UUID().uuidString.prefix(8))", at: 1
        ).key
        var configuration = ServerConfiguration()
        configuration.console = true
        configuration.requestRate = .unlimited
        configuration.changeRate = .unlimited
        configuration.httpPort = port
        let app = buildApplication(configuration: configuration, dependencies: ServerDependencies(store: store))
        let server = Task { try await app.runService() }
        defer { server.cancel() }
        let base = "http://127.0.0.1:\(port)"
        let session = URLSession(configuration: .ephemeral)
        for _ in 0..<500 {
            if (try? await session.data(from: URL(string: base + "/health")!)) != nil { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        var login = URLRequest(url: URL(string: base + "/console/login")!)
        login.httpMethod = "POST"
        login.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        login.httpBody = Data("key=\(key)".utf8)
        let (_, response) = try await session.data(for: login)
        guard (response as? HTTPURLResponse)?.url?.path == "/console" else {
            throw BenchError("login failed: \(String(describing: response.url))")
        }
        let someAccount = String(format: "acct-%07d", accounts / 2)
        for (name, page) in [
            ("overview", "/console"), ("tips", "/console/tips"),
            ("account (\(entries / accounts) entries)", "/console/accounts/\(someAccount)"),
            ("accounts list", "/console/accounts"),
        ] {
            var measurement = Measurement()
            for _ in 0..<loads {
                let start = ContinuousClock.now
                let (data, response) = try await session.data(from: URL(string: base + page)!)
                measurement.samples.append(ContinuousClock.now - start)
                guard (response as? HTTPURLResponse)?.statusCode == 200,
                    (response as? HTTPURLResponse)?.url?.path == page
                else { throw BenchError("\(page) answered \(response)") }
                _ = data
            }
            print(
                "console \(name): n=\(loads) p50 \(format(measurement.percentile(0.5).milliseconds)) ms"
                    + " max \(format(measurement.percentile(1).milliseconds)) ms")
        }
    }

    /// Accounts `acct-0000000…` with one device each; every account's log: displays of five tips,
    /// invalidations (closed or used), parameter sets and donations; then every tip usage derived.
    func build(_ store: SQLiteSyncStore) async throws {
        let perAccount = max(10, entries / accounts)
        let reasons: [InvalidationReason] = [.tipClosed, .actionPerformed, .tipClosed, .displayCountExceeded]
        let started = ContinuousClock.now
        for index in 0..<accounts {
            let name = String(format: "acct-%07d", index)
            let id = try await store.createAccount(name: name)
            _ = try await CredentialIssuance(store).createToken(accountName: name, device: "phone")
            let base: UInt64 = 1_790_000_000_000 + UInt64(index) * 1000
            let changes = (1...perAccount).map { offset -> Change in
                let seq = Int64(offset)
                let tip = "tip-\(offset % 5)"
                let operation: Change.Operation =
                    switch offset % 10 {
                    case 0: .eligibility(tip: tip, state: .invalidated(reasons[(index + offset) % reasons.count]))
                    case 1, 2, 3:
                        .display(
                            tip: tip, epoch: nil, count: seq, duration: Double(seq), lastDisplayed: Int64(base) + seq)
                    case 4, 5: .parameter(id: "p\(offset % 3)", value: .int(seq))
                    default: .donation(event: "opened", id: "phone:\(seq)", date: Int64(base) + seq, info: nil)
                    }
                return Change(
                    device: "phone", seq: seq, hlc: HLC(milliseconds: base + UInt64(offset) * 10, counter: 0),
                    operation: operation)
            }
            for batch in stride(from: 0, to: changes.count, by: 1000) {
                _ = try await store.push(
                    Array(changes[batch..<min(batch + 1000, changes.count)]),
                    from: DeviceIdentity(accountID: id, device: "phone"))
            }
            try await TipUsageDerivation(store).summarizeTipUsage(account: id)
            if index % 10_000 == 9_999 {
                print(
                    "built \(index + 1) accounts in \(format((ContinuousClock.now - started).milliseconds / 1000, 1)) s"
                )
            }
        }
    }
}
