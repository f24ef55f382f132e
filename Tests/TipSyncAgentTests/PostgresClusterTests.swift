import Foundation
import Testing
import TipSync
import TipSyncAgent
import TipSyncCore
import TipSyncTestSupport

/// Two `tipsync-server` processes on one throwaway PostgreSQL, as `deploy/docker-compose.yml` runs them.
@Suite struct PostgresClusterTests {
    @Test func twoInstancesOnePostgresCarryADismissalLiveAndLoseNothing() async throws {
        let database = try await ThrowawayPostgres.freshDatabase()
        let first = try await TestServer(database: database)
        let second = try await TestServer(database: database, createAccount: false)
        try await first.start()
        try await second.start()
        defer {
            first.terminate()
            second.terminate()
        }
        let directory = scratchDirectory()

        // Agent A on instance 1, agent B on instance 2, both running: A's dismissal reaches B live.
        let phone = try await TestAgent("phone", in: directory, server: first)
        let laptop = try await TestAgent("laptop", in: directory, server: second)
        let phoneDaemon = try await phone.startDaemon()
        let laptopDaemon = try await laptop.startDaemon()
        let watcher = try LocalAPIClient(path: laptop.socketPath)
        try watcher.send(#"{"op":"watch","tip":"welcome"}"#)
        // `pending` while the laptop's first sync holds it (protocol.md §17.1), then `available`.
        var line = try await watcher.nextLine()
        while line?.contains(#""status":"pending""#) == true { line = try await watcher.nextLine() }
        #expect(line?.contains(#""status":"available""#) == true, "\(line ?? "the watch ended")")
        try await phone.check(["invalidate", "welcome"])
        #expect(
            try await watcher.nextLine()
                == #"{"id":"welcome","status":"invalidated","reason":"tipClosed","displayCount":0,\#(welcomeContent)}"#)
        let phoneStatus = await phoneDaemon.stop()
        let laptopStatus = await laptopDaemon.stop()
        #expect(phoneStatus == 0 && laptopStatus == 0)

        // 8 devices push concurrently, half through each instance, in batches of 50.
        let devices = (0..<8).map { "pusher-\($0)" }
        var clients: [SyncClient] = []
        for (index, device) in devices.enumerated() {
            let replica = try TipsReplica(
                directory: directory.appendingPathComponent(device), deviceID: device, environment: [:])
            try replica.donate(event: "opened", infos: (0..<200).map { .object(["n": .int(Int64($0))]) })
            var configuration = SyncConfiguration(
                server: URL(string: (index % 2 == 0 ? first : second).url)!,
                token: try await first.token(device: device))
            configuration.pushBatchSize = 50
            clients.append(SyncClient(replica: replica, configuration: configuration))
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for client in clients { group.addTask { try await client.push() } }
            try await group.waitForAll()
        }

        // Pull everything (through instance 2) and count: every change once, none lost.
        let reader = URLSessionTransport(baseURL: URL(string: second.url)!)
        let token = try await first.token(device: "reader")
        var cursor: String?
        var seen: [String: Set<Int64>] = [:]
        var total = 0
        repeat {
            var path = "/v1/pull?limit=333"
            if let cursor { path += "&cursor=\(cursor)" }
            let response = try await reader.send(
                SyncHTTPRequest(method: "GET", path: path, headers: ["Authorization": "Bearer \(token)"]))
            #expect(response.status == 200)
            let page = try JSONCoding.decoder.decode(PullResponse.self, from: response.body)
            for change in page.changes where change.device.hasPrefix("pusher-") {
                seen[change.device, default: []].insert(change.seq)
                total += 1
            }
            cursor = page.more ? page.cursor : nil
        } while cursor != nil
        #expect(total == 8 * 200)
        for device in devices { #expect(seen[device] == Set(1...200), "\(device)") }
    }
}
