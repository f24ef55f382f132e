import Foundation
import Testing
import TipSyncAgent

/// Several agents on one server: counts add up, offline work catches up, skewed clocks converge.
@Suite struct ConvergenceTests {
    @Test func donationsAndDisplaysFromTwoDevicesCountOnAThird() async throws {
        let directory = scratchDirectory()
        let server = try TestServer(directory: directory)
        try await server.start()
        defer { server.stop() }
        let phone = try TestAgent("phone", in: directory, server: server)
        let laptop = try TestAgent("laptop", in: directory, server: server)
        let tablet = try TestAgent("tablet", in: directory, server: server)

        // `favorite` needs isLoggedIn, 3 opened-detail donations in 5 days and 2 viewed-yard with yardID 7.
        try phone.check(["param", "set", "isLoggedIn", "true"])
        try phone.check(["donate", "opened-detail"])
        try phone.check(["donate", "opened-detail"])
        try phone.check(["donate", "viewed-yard", "--value", #"{"yardID":7}"#])
        try laptop.check(["donate", "opened-detail"])
        try laptop.check(["donate", "viewed-yard", "--value", #"{"yardID":7}"#])
        try laptop.check(["donate", "viewed-yard", "--value", #"{"yardID":8}"#])
        #expect(try phone.status("favorite").status == "pending")
        #expect(try laptop.status("favorite").status == "pending")

        // `upgrade` has MaxDisplayCount(2): one display on each device.
        try phone.check(["display", "upgrade"])
        try laptop.check(["display", "upgrade", "--duration", "4"])
        #expect(try phone.status("upgrade").status != "invalidated")

        for agent in [phone, laptop, tablet, phone] { try agent.check(["sync"]) }
        #expect(try tablet.status("favorite").status == "available")
        for agent in [phone, laptop, tablet] {
            let upgrade = try agent.status("upgrade")
            #expect(upgrade.status == "invalidated" && upgrade.reason == "displayCountExceeded", "\(agent.name)")
            #expect(upgrade.displayCount == 2)
        }
        #expect(try tablet.check(["param", "get", "isLoggedIn"]) == "true\n")
    }

    @Test func anOfflineAgentKeepsWorkingAndCatchesUp() async throws {
        let directory = scratchDirectory()
        let server = try TestServer(directory: directory)
        try await server.start()
        let phone = try TestAgent("phone", in: directory, server: server)
        let laptop = try TestAgent("laptop", in: directory, server: server)
        try phone.check(["sync"])
        try laptop.check(["sync"])

        server.stop()
        try phone.check(["invalidate", "welcome"])
        try phone.check(["display", "favorite"])
        let offline = try phone.run(["sync"])
        #expect(offline.status == 1)
        #expect(offline.stderr.contains("cannot reach the server at \(server.url)"))
        #expect(offline.stderr.contains("2 change(s) stay queued"))
        #expect(try phone.status("welcome").status == "invalidated")  // works offline

        try await server.start()  // same port, same database
        defer { server.stop() }
        try phone.check(["sync"])
        try laptop.check(["sync"])
        #expect(try laptop.status("welcome").status == "invalidated")
        #expect(try laptop.status("favorite").displayCount == 1)
    }

    @Test func anAgentADayAheadConvergesAndDoesNotWinForever() async throws {
        let directory = scratchDirectory()
        let server = try TestServer(directory: directory)
        try await server.start()
        defer { server.stop() }
        let phone = try TestAgent("phone", in: directory, server: server)
        let laptop = try TestAgent("laptop", in: directory, server: server)
        let skewed = try TestAgent("skewed", in: directory, server: server, clockOffset: 86_400)

        // The skewed device writes first; its stamps are a day ahead until the server corrects them.
        try skewed.check(["param", "set", "plan", #""pro""#])
        try skewed.check(["invalidate", "welcome"])
        try skewed.check(["sync"])
        try phone.check(["sync"])
        #expect(try phone.check(["param", "get", "plan"]) == "\"pro\"\n")
        #expect(try phone.status("welcome").status == "invalidated")

        // Later writes elsewhere win: the skewed writes do not stay on top for a day.
        try phone.check(["param", "set", "plan", #""team""#])
        try laptop.check(["sync"])
        try laptop.check(["reset-eligibility", "welcome"])
        for agent in [phone, laptop, skewed, phone, laptop] { try agent.check(["sync"]) }
        for agent in [phone, laptop, skewed] {
            #expect(try agent.check(["param", "get", "plan"]) == "\"team\"\n", "\(agent.name)")
            #expect(try agent.status("welcome").status == "available", "\(agent.name)")
        }
        #expect(
            try phone.check(["status", "--json"]) == (try skewed.check(["status", "--json"])))
    }
}
