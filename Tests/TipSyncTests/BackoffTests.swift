import Foundation
import Synchronization
import Testing
import TipSyncTestSupport

@testable import TipSync

/// protocol.md §17.3: full jitter — a delay drawn uniformly from zero to a ceiling that doubles with
/// each failure in a row, up to the maximum; a stream the server ended reopens within the base.
@Suite struct BackoffTests {
    @Test func theCeilingDoublesFromTheBaseUpToTheMaximum() {
        let backoff = Backoff()  // the defaults: base 1 s, maximum 60 s
        #expect((0...8).map { backoff.ceiling(afterFailures: $0) } == [1, 2, 4, 8, 16, 32, 60, 60, 60])
        // However many failures: no overflow, no trap, the maximum.
        #expect(backoff.ceiling(afterFailures: .max) == 60)
        #expect(backoff.ceiling(afterFailures: -3) == 1)
    }

    @Test func eachDelayIsTheDrawOfItsCeiling() {
        let backoff = Backoff(base: 0.5, maximum: 10)
        #expect(backoff.delay(afterFailures: 0, draw: 0) == 0)
        #expect(backoff.delay(afterFailures: 0, draw: 1) == 0.5)
        #expect(backoff.delay(afterFailures: 3, draw: 0.25) == 1)
        #expect(backoff.delay(afterFailures: 10, draw: 0.5) == 5)
        // A draw outside 0…1 (a faulty source) stays within the range.
        #expect(backoff.delay(afterFailures: 2, draw: 7) == 2)
        #expect(backoff.delay(afterFailures: 2, draw: -1) == 0)
        #expect(backoff.delay(afterFailures: 2, draw: .nan) == 2)
    }

    /// Issue 72, item 3: after a 5 s outage the web page came back 13.7 s after the server (the
    /// ceiling had doubled to 8 s, then 16 s). The ceiling is never above what was already waited.
    @Test func theCeilingIsNeverAboveWhatWasAlreadyWaited() {
        let backoff = Backoff()
        #expect(backoff.ceiling(afterFailures: 0, waited: 0) == 1)
        #expect(backoff.ceiling(afterFailures: 3, waited: 2.5) == 2.5)
        #expect(backoff.ceiling(afterFailures: 3, waited: 100) == 8)
        #expect(backoff.ceiling(afterFailures: 10, waited: 100) == 60)
        #expect(backoff.ceiling(afterFailures: 3, waited: .nan) == 1)
        // Full draws from a device that keeps failing: each wait at most what came before it.
        var waited = 0.0
        var delays: [Double] = []
        for failures in 0..<9 {
            let delay = backoff.delay(afterFailures: failures, waited: waited, draw: 1)
            delays.append(delay)
            waited += delay
        }
        #expect(delays == [1, 1, 2, 4, 8, 16, 32, 60, 60])
        // Whatever the draws, the server back after an outage of 5 s finds the device back within 5 s
        // more: the wait that spans its return is at most what was waited before it.
        var generator = SeededGenerator(seed: 72)
        for _ in 0..<1000 {
            var time = 0.0
            var failures = 0
            var waited = 0.0
            while time < 5 {
                let delay = backoff.delay(
                    afterFailures: failures, waited: waited, draw: Double.random(in: 0...1, using: &generator))
                time += delay
                waited += delay
                failures += 1
            }
            #expect(time <= 10)
        }
    }

    @Test func aStreamTheServerEndedReopensWithinTheBase() {
        let backoff = Backoff(base: 2, maximum: 60)
        #expect(backoff.delayAfterStreamEnded(draw: 0) == 0)
        #expect(backoff.delayAfterStreamEnded(draw: 0.25) == 0.5)
        #expect(backoff.delayAfterStreamEnded(draw: 1) == 2)
    }

    /// Drawn at random, a thousand devices that lost their server together come back spread over
    /// the ceiling, not in one instant: each tenth of the first second gets some of them.
    @Test func devicesThatFailTogetherComeBackSpreadOut() {
        var generator = SeededGenerator(seed: 58)
        let delays = (0..<1000).map { _ in
            Backoff().delay(afterFailures: 0, draw: Double.random(in: 0...1, using: &generator))
        }
        let tenths = Dictionary(grouping: delays) { min(Int($0 * 10), 9) }.mapValues(\.count)
        #expect(tenths.keys.sorted() == Array(0...9))
        #expect(tenths.values.allSatisfy { $0 >= 50 && $0 <= 150 })
    }

    @Test func theConfigurationsSettingsAreTheRulesBaseAndMaximum() throws {
        var configuration = SyncConfiguration(server: try #require(URL(string: "http://x")), token: "t")
        #expect(configuration.backoff == Backoff(base: 1, maximum: 60))
        configuration.initialBackoff = 0.25
        configuration.maximumBackoff = 5
        #expect(configuration.backoff == Backoff(base: 0.25, maximum: 5))
    }
}

/// `SyncConfiguration.transport` is how requests reach the server for a client made from the
/// configuration alone. `SyncClient(replica:configuration:)` ignored it and used the default
/// transport (found by `ReconnectStormTests`: 200 devices given their own HTTP client all shared the
/// process's, 8 connections for 200 streams).
@Suite struct ConfiguredTransportTests {
    final class Recording: SyncTransport {
        let paths = Mutex<[String]>([])
        func send(_ request: SyncHTTPRequest) async throws -> SyncHTTPResponse {
            paths.withLock { $0.append(request.path) }
            throw SyncClientError.unreachable("recorded")
        }
    }

    @Test func aClientMadeFromTheConfigurationUsesItsTransport() async throws {
        let replica = try TipsReplica(
            directory: Scratch.path("configured-transport"), deviceID: "phone", environment: [:])
        let recording = Recording()
        var configuration = SyncConfiguration(server: try #require(URL(string: "http://127.0.0.1:1")), token: "t")
        configuration.transport = recording
        let client = SyncClient(replica: replica, configuration: configuration)
        await #expect(throws: SyncClientError.self) { try await client.syncOnce() }
        #expect(!recording.paths.withLock { $0 }.isEmpty)
    }
}
