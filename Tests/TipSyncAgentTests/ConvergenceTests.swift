import Foundation
import Testing
import TipSyncAgent

/// Several agents on one server: counts add up, offline work catches up, skewed clocks converge.
@Suite struct ConvergenceTests {
    @Test func donationsAndDisplaysFromTwoDevicesCountOnAThird() async throws {
        let directory = scratchDirectory()
        let server = try await TestServer(directory: directory)
        try await server.start()
        defer { server.terminate() }
        let phone = try await TestAgent("phone", in: directory, server: server)
        let laptop = try await TestAgent("laptop", in: directory, server: server)
        let tablet = try await TestAgent("tablet", in: directory, server: server)

        // `favorite` needs isLoggedIn, 3 opened-detail donations in 5 days and 2 viewed-yard with yardID 7.
        try await phone.check(["param", "set", "isLoggedIn", "true"])
        try await phone.check(["donate", "opened-detail"])
        try await phone.check(["donate", "opened-detail"])
        try await phone.check(["donate", "viewed-yard", "--value", #"{"yardID":7}"#])
        try await laptop.check(["donate", "opened-detail"])
        try await laptop.check(["donate", "viewed-yard", "--value", #"{"yardID":7}"#])
        try await laptop.check(["donate", "viewed-yard", "--value", #"{"yardID":8}"#])
        #expect(try await phone.status("favorite").status == "pending")
        #expect(try await laptop.status("favorite").status == "pending")

        // `upgrade` has MaxDisplayCount(2): one display on each device.
        try await phone.check(["display", "upgrade"])
        try await laptop.check(["display", "upgrade", "--duration", "4"])
        #expect(try await phone.status("upgrade").status != "invalidated")

        for agent in [phone, laptop, tablet, phone] { try await agent.check(["sync"]) }
        #expect(try await tablet.status("favorite").status == "available")
        for agent in [phone, laptop, tablet] {
            let upgrade = try await agent.status("upgrade")
            #expect(upgrade.status == "invalidated" && upgrade.reason == "displayCountExceeded", "\(agent.name)")
            #expect(upgrade.displayCount == 2)
        }
        #expect(try await tablet.check(["param", "get", "isLoggedIn"]) == "true\n")
    }

    @Test func anOfflineAgentKeepsWorkingAndCatchesUp() async throws {
        let directory = scratchDirectory()
        let server = try await TestServer(directory: directory)
        try await server.start()
        let phone = try await TestAgent("phone", in: directory, server: server)
        let laptop = try await TestAgent("laptop", in: directory, server: server)
        try await phone.check(["sync"])
        try await laptop.check(["sync"])

        await server.stop()
        try await phone.check(["invalidate", "welcome"])
        try await phone.check(["display", "favorite"])
        let offline = try await phone.run(["sync"])
        #expect(offline.status == 1)
        #expect(offline.stderr.contains("cannot reach the server at \(server.url)"))
        #expect(offline.stderr.contains("2 change(s) stay queued"))
        #expect(try await phone.status("welcome").status == "invalidated")  // works offline

        try await server.start()  // same port, same database
        defer { server.terminate() }
        try await phone.check(["sync"])
        try await laptop.check(["sync"])
        #expect(try await laptop.status("welcome").status == "invalidated")
        #expect(try await laptop.status("favorite").displayCount == 1)
    }

    @Test func anAgentADayAheadConvergesAndDoesNotWinForever() async throws {
        let directory = scratchDirectory()
        let server = try await TestServer(directory: directory)
        try await server.start()
        defer { server.terminate() }
        let phone = try await TestAgent("phone", in: directory, server: server)
        let laptop = try await TestAgent("laptop", in: directory, server: server)
        let skewed = try await TestAgent("skewed", in: directory, server: server, clockOffset: 86_400)

        // The skewed device writes first; its stamps are a day ahead until the server corrects them.
        try await skewed.check(["param", "set", "plan", #""pro""#])
        try await skewed.check(["invalidate", "welcome"])
        try await skewed.check(["sync"])
        try await phone.check(["sync"])
        #expect(try await phone.check(["param", "get", "plan"]) == "\"pro\"\n")
        #expect(try await phone.status("welcome").status == "invalidated")

        // Later writes elsewhere win: the skewed writes do not stay on top for a day.
        try await phone.check(["param", "set", "plan", #""team""#])
        try await laptop.check(["sync"])
        try await laptop.check(["reset-eligibility", "welcome"])
        for agent in [phone, laptop, skewed, phone, laptop] { try await agent.check(["sync"]) }
        for agent in [phone, laptop, skewed] {
            #expect(try await agent.check(["param", "get", "plan"]) == "\"team\"\n", "\(agent.name)")
            #expect(try await agent.status("welcome").status == "available", "\(agent.name)")
        }
        #expect(
            try await phone.check(["status", "--json"]) == (try await skewed.check(["status", "--json"])))
    }
}
