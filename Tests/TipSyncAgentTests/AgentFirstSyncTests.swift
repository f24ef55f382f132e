import Foundation
import Logging
import Synchronization
import Testing
import TipSync
import TipSyncCore
import TipSyncTestSupport

@testable import TipSyncAgent

/// The agent over a device's life (issue 52): a store that has never synced says a tip is held for
/// the first sync rather than `available`, from `init` on, until the bounded wait has passed; the daemon logs an outage and a recovery, one line each.
@Suite struct AgentFirstSyncTests {
    func agent() throws -> Agent { try exampleAgent() }

    @Test func aStoreThatNeverSyncedSaysItsTipsAreHeldInEveryProcess() throws {
        // A wait of 600 s (`init --first-sync-timeout`): nothing here can outlast it by accident.
        let agent = try exampleAgent(firstSyncTimeout: 600)
        // `init` starts the hold: the store syncs from then on.
        #expect(try agent.status(tip: "welcome").tips[0].heldForFirstSync)
        // A server that never answers: once the bounded wait has passed the tip shows (offline first).
        let later = try Agent(store: agent.store, clockOffset: 600.1)
        #expect(try later.status(tip: "welcome").tips[0].status == "available")
        _ = agent.syncClient()  // what `run` and `sync` do first: the wait starts anew
        let report = try agent.status(tip: "welcome").tips[0]
        #expect(report.status == "pending" && report.heldForFirstSync)
        #expect(report.statusText == "pending (held for the first sync)")
        #expect(report.jsonLine.hasSuffix(#""actions":[],"heldForFirstSync":true}"#))
        #expect(report.reason == "firstSync")
        // A tip pending for its own rules is not "held".
        let favorite = try agent.status(tip: "favorite").tips[0]
        #expect(favorite.status == "pending" && !favorite.heldForFirstSync)
        #expect(favorite.jsonLine.hasPrefix(#"{"id":"favorite","status":"pending","reason":"rule","displayCount":0,"#))
        // Another process on the same store (a CLI `status` beside the daemon) reads the same.
        let other = try Agent(store: agent.store)
        #expect(try other.status(tip: "welcome").tips[0].heldForFirstSync)
        // Decoding what the local API answers keeps the flag.
        let decoded = try JSONDecoder().decode(TipReport.self, from: Data(report.jsonLine.utf8))
        #expect(decoded == report)
    }

    @Test func anOutageIsTwoInfoLinesHoweverLongItLasts() {
        let lines = Lines()
        let logger = Logger(label: "test") { _ in CollectingHandler(lines: lines) }
        var ok = SyncStatus()
        ok.isConnected = true
        ok.hasSynced = true
        var failing = ok
        failing.isConnected = false
        failing.lastError = .unreachable("connection refused")
        var stillFailing = failing
        stillFailing.lastError = .unreachable("timed out")
        AgentDaemon.log(SyncStatus(), ok, logger)
        AgentDaemon.log(ok, failing, logger)
        AgentDaemon.log(failing, stillFailing, logger)
        AgentDaemon.log(stillFailing, ok, logger)
        #expect(
            lines.all.withLock { $0 } == [
                "info first sync complete",
                "info cannot sync; changes wait in the store and are pushed when it works again",
                "info syncing again",
            ])
    }
}

extension AgentFirstSyncTests {
    /// A refusal is a `warning` naming its code and when the agent tries again, once per code; the
    /// recovery one `info` line (issue 72: the daemon used to log `sync stopped` and sync no more).
    @Test func aRefusalIsAWarningWithItsCodeOncePerCode() {
        let lines = Lines()
        let logger = Logger(label: "test") { _ in CollectingHandler(lines: lines) }
        var ok = SyncStatus()
        ok.isConnected = true
        ok.hasSynced = true
        var refused = ok
        refused.state = .refused
        refused.lastError = .unauthorized("unknown or revoked token")
        refused.nextAttemptAt = Date(timeIntervalSince1970: 1_700_000_000)
        var later = refused
        later.nextAttemptAt = Date(timeIntervalSince1970: 1_700_000_060)
        var failing = later
        failing.lastError = .rejected(status: 500, code: "server_error", message: "the server failed")
        AgentDaemon.log(ok, refused, logger)
        AgentDaemon.log(refused, later, logger)
        AgentDaemon.log(later, failing, logger)
        AgentDaemon.log(failing, ok, logger)
        #expect(
            lines.all.withLock { $0 } == [
                "warning the server refuses to sync; retrying with backoff",
                "warning the server refuses to sync; retrying with backoff",
                "info syncing again",
            ])
    }
}

final class Lines: Sendable {
    let all = Mutex<[String]>([])
}

/// Keeps each log line's level and message.
struct CollectingHandler: LogHandler {
    let lines: Lines
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        lines.all.withLock { $0.append("\(event.level) \(event.message)") }
    }
}
