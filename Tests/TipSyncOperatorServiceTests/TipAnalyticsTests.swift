import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Testing
import TipSyncCore
import TipSyncServerTestSupport

@testable import TipSyncDeviceService
@testable import TipSyncOperatorService
@testable import TipSyncServer

/// Tip analytics that can be trusted (issue 31, item 11): display limits counted as devices count
/// them, per-tip daily series, and the share of accounts that used the feature after seeing its tip.
@Suite struct TipAnalyticsTests {
    static let day1: UInt64 = 1_795_564_800_000  // 2026-11-25T00:00:00Z
    static let day: UInt64 = 86_400_000

    static func display(_ seq: Int64, _ tip: String, count: Int64, duration: Double = 1, at ms: UInt64) -> Change {
        change(
            "phone", seq, .display(tip: tip, epoch: nil, count: count, duration: duration, lastDisplayed: Int64(ms)),
            ms: ms)
    }

    /// "Count limit" and "Duration limit" stayed 0: devices compute those invalidations and never
    /// write them, so the log alone never shows them. With the uploaded catalog they are counted.
    @Test(arguments: Backend.allCases)
    func displayLimitsCountAsDevicesComputeThem(_ backend: Backend) async throws {
        try await backend.withStore { store in
            let catalog = #"""
                {"tips": [{"id": "count", "title": "C", "options": {"maxDisplayCount": 2}},
                          {"id": "duration", "title": "D", "options": {"maxDisplayDuration": 10}},
                          {"id": "free", "title": "F"}]}
                """#
            try await CatalogComposition(store).putCatalogJSON(catalog)
            let ann = try await phoneAccount(store, "ann")
            _ = try await store.push(
                [
                    Self.display(1, "count", count: 1, at: Self.day1 + 1000),
                    Self.display(2, "count", count: 2, at: Self.day1 + 2000),
                    Self.display(3, "duration", count: 1, duration: 12.5, at: Self.day1 + 3000),
                    Self.display(4, "free", count: 9, at: Self.day1 + 4000),
                ], from: ann)
            try await TipUsageDerivation(store).summarizeTipUsage(account: ann.accountID)
            let usage = Dictionary(
                uniqueKeysWithValues: try await store.tipUsage(account: ann.accountID).map { ($0.tip, $0) })
            #expect(usage["count"]?.reason == .displayCountExceeded)
            #expect(usage["count"]?.invalidatedAt == Int64(Self.day1 + 2000))
            #expect(usage["duration"]?.reason == .displayDurationExceeded)
            #expect(usage["free"]?.reason == nil)
            let totals = Dictionary(uniqueKeysWithValues: try await store.tipUsageTotals().map { ($0.tip, $0) })
            #expect(totals["count"]?.invalidated == [.displayCountExceeded: 1])
            #expect(totals["duration"]?.invalidated == [.displayDurationExceeded: 1])
            // An explicit invalidation written by the app wins over a limit, as on devices.
            _ = try await store.push(
                [change("phone", 5, .eligibility(tip: "count", state: .invalidated(.tipClosed)), ms: Self.day1 + 5000)],
                from: ann)
            try await TipUsageDerivation(store).summarizeTipUsage(account: ann.accountID)
            #expect(try await store.tipUsageTotals().first { $0.tip == "count" }?.invalidated == [.tipClosed: 1])
        }
    }

    /// A catalog uploaded after the accounts were summarized has them summarized again.
    @Test(arguments: Backend.allCases)
    func aNewCatalogHasEveryAccountSummarizedAgain(_ backend: Backend) async throws {
        try await backend.withStore { store in
            let ann = try await phoneAccount(store, "ann")
            _ = try await store.push([Self.display(1, "tip", count: 3, at: Self.day1)], from: ann)
            try await TipUsageDerivation(store).summarizeTipUsage(account: ann.accountID)
            #expect(try await store.tipUsageTotals().first?.invalidated == [:])
            #expect(try await store.accountsWithNewChanges(after: 0, limit: 10).isEmpty)
            try await CatalogComposition(store).putCatalogJSON(
                #"{"tips": [{"id": "tip", "title": "T", "options": {"maxDisplayCount": 3}}]}"#)
            #expect(try await store.accountsWithNewChanges(after: 0, limit: 10) == [ann.accountID])
            let summarizer = TipUsageSummarizer(store: store, interval: .seconds(3600), logger: .init(label: "test"))
            #expect(try await summarizer.summarizePending() == 1)
            #expect(try await store.tipUsageTotals().first?.invalidated == [.displayCountExceeded: 1])
        }
    }

    /// Per UTC day: accounts that first displayed the tip, closed it, used it; and the share of
    /// accounts that used the feature after seeing the tip.
    @Test(arguments: Backend.allCases)
    func dailySeriesAndUseAfterSeeing(_ backend: Backend) async throws {
        try await backend.withStore { store in
            let (day1, day) = (Self.day1, Self.day)
            // Ann: sees it on day 1, uses the feature on day 2. Bob: sees it on day 1, closes it on day 3.
            // Cyd: uses the feature on day 2 without ever seeing the tip. Dan: sees it on day 2 only.
            let ann = try await phoneAccount(store, "ann")
            _ = try await store.push(
                [
                    Self.display(1, "tip", count: 1, at: day1 + 10),
                    change(
                        "phone", 2, .eligibility(tip: "tip", state: .invalidated(.actionPerformed)), ms: day1 + day + 5),
                ], from: ann)
            let bob = try await phoneAccount(store, "bob")
            _ = try await store.push(
                [
                    Self.display(1, "tip", count: 2, at: day1 + 20),
                    change("phone", 2, .eligibility(tip: "tip", state: .invalidated(.tipClosed)), ms: day1 + 2 * day),
                ], from: bob)
            let cyd = try await phoneAccount(store, "cyd")
            _ = try await store.push(
                [change("phone", 1, .eligibility(tip: "tip", state: .invalidated(.actionPerformed)), ms: day1 + day)],
                from: cyd)
            let dan = try await phoneAccount(store, "dan")
            _ = try await store.push([Self.display(1, "tip", count: 1, at: day1 + day + 1)], from: dan)
            for identity in [ann, bob, cyd, dan] {
                try await TipUsageDerivation(store).summarizeTipUsage(account: identity.accountID)
            }
            let totals = try #require(try await store.tipUsageTotals().first)
            #expect(totals.displayedAccounts == 3)
            #expect(totals.usedAfterSeeing == 1)
            #expect(totals.usedAfterSeeingShare == 1.0 / 3)
            #expect(
                totals.daily == [
                    "2026-11-25": .init(displayed: 2, closed: 0, used: 0),
                    "2026-11-26": .init(displayed: 1, closed: 0, used: 2),
                    "2026-11-27": .init(displayed: 0, closed: 1, used: 0),
                ])
            // Erasing an account takes it out of every day.
            _ = try await store.eraseAccount(name: "ann", at: 1)
            let after = try #require(try await store.tipUsageTotals().first)
            #expect(
                after.daily["2026-11-25"] == .init(displayed: 1)
                    && after.daily["2026-11-26"] == .init(displayed: 1, used: 1))
            #expect(after.usedAfterSeeing == 0)
        }
    }

    @Test func daysAreUTCCivilDates() {
        #expect(TipUsageCounters.day(0) == "1970-01-01")
        #expect(TipUsageCounters.day(86_399_999) == "1970-01-01")
        #expect(TipUsageCounters.day(951_782_400_000) == "2000-02-29")
        #expect(TipUsageCounters.day(Int64(Self.day1)) == "2026-11-25")
        #expect(TipUsageCounters.day(-1) == "1969-12-31")
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate]
        for ms in stride(from: Int64(0), to: 4_102_444_800_000, by: 7_777_777_777) {
            #expect(TipUsageCounters.day(ms) == formatter.string(from: Date(timeIntervalSince1970: Double(ms) / 1000)))
        }
    }
}

/// The tips page splits each tip's figures by catalog version (issue 33): did a rule change make the
/// tip more used or more closed?
@Suite struct TipUsageByCatalogVersionTests {
    @Test func eachOutcomeCountsForTheVersionInForceWhenItHappened() {
        let versions = [
            CatalogVersionRecord(version: 1, uploadedBy: "ops", uploadedAt: 1000, restoredFrom: nil, text: "{}"),
            CatalogVersionRecord(version: 2, uploadedBy: "ops", uploadedAt: 5000, restoredFrom: nil, text: "{}"),
        ]
        let usage = [
            // Seen before any catalog, closed under version 1.
            TipUsage(tip: "t", reason: .tipClosed, displays: 1, firstDisplayAt: 500, invalidatedAt: 2000),
            // Seen and used under version 1.
            TipUsage(tip: "t", reason: .actionPerformed, displays: 2, firstDisplayAt: 1500, invalidatedAt: 3000),
            // Seen under 2 (at its very upload), used under 2; seen under 2, closed under 2.
            TipUsage(tip: "t", reason: .actionPerformed, displays: 1, firstDisplayAt: 5000, invalidatedAt: 6000),
            TipUsage(tip: "t", reason: .tipClosed, displays: 1, firstDisplayAt: 5500, invalidatedAt: 5600),
            // A display limit is neither closed nor used.
            TipUsage(tip: "t", reason: .displayCountExceeded, displays: 3, firstDisplayAt: 7000, invalidatedAt: 7100),
        ]
        let split = TipUsageByCatalogVersion(usage: usage, versions: versions.reversed())
        #expect(
            split.rows == [
                .init(version: 2, displayed: 3, closed: 1, used: 1),
                .init(version: 1, displayed: 1, closed: 1, used: 1),
                .init(version: 0, displayed: 1, closed: 0, used: 0),
            ])
    }

    @Test(arguments: Backend.allCases)
    func theStoreReadsOneTipsRows(_ backend: Backend) async throws {
        try await backend.withStore { store in
            for name in ["ann", "bob"] {
                let identity = try await phoneAccount(store, name)
                _ = try await store.push(
                    [TipAnalyticsTests.display(1, "t", count: 1, at: TipAnalyticsTests.day1)], from: identity)
                try await TipUsageDerivation(store).summarizeTipUsage(account: identity.accountID)
            }
            #expect(try await store.tipUsage(tip: "t").count == 2)
            #expect(try await store.tipUsage(tip: "other").isEmpty)
        }
    }
}
