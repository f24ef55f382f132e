import ArgumentParser
import Foundation
import TipSync
import TipSyncAgent
import TipSyncCore

/// A store with a catalog of `tips` tips (each with a rule over its own event and a parameter)
/// and `donations` donations per event, for the agent benchmarks.
func makeAgentStore(tips: Int, donations: Int) throws -> AgentStore {
    let directory = URL(fileURLWithPath: "/tmp/tsb-\(UUID().uuidString.prefix(8))")
    let store = AgentStore(directory: directory)
    try store.initialize(AgentConfiguration(server: URL(string: "http://127.0.0.1:9")!, token: "none", device: "bench"))
    var catalog: [String] = []
    for index in 0..<tips {
        catalog.append(
            #"{"id":"tip-\#(index)","title":"Tip \#(index)","rules":[{">=":[{"count":{"donatedWithin":[{"donations":"event-\#(index)"},{"days":7}]}},3]},{"==":[{"param":"plan"},"free"]}],"options":{"maxDisplayCount":5}}"#
        )
    }
    // Every event a rule reads is declared (a catalog that reads an undeclared event is refused).
    let events = (0..<tips).map { #"{"id":"event-\#($0)"}"# }.joined(separator: ",")
    let text =
        #"{"parameters":[{"id":"plan","default":"free"}],"events":["# + events + #"],"tips":["#
        + catalog.joined(separator: ",") + "]}"
    let file = directory.appendingPathComponent("bench-catalog.json")
    try Data(text.utf8).write(to: file)
    let agent = try Agent(store: store, environment: [:])
    _ = try agent.loadCatalog(from: file)
    for index in 0..<tips {
        try agent.replica.donate(event: "event-\(index)", infos: Array(repeating: nil, count: donations))
    }
    return store
}

/// The `tipsync-agent` executable next to this one (same build configuration).
var agentExecutable: URL {
    URL(fileURLWithPath: ProcessInfo.processInfo.arguments[0]).deletingLastPathComponent()
        .appendingPathComponent("tipsync-agent")
}

/// `tipsync-agent status --json` as a whole process (target: under 50 ms wall time for 100 tips).
struct AgentStatus: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "agent-status", abstract: "Wall time of `tipsync-agent status --json` as a whole process.")

    @Option(help: "Catalog tips.") var tips = 100
    @Option(help: "Donations per tip's event.") var donations = 100
    @Option(help: "Timed runs.") var runs = 50

    func run() throws {
        let store = try makeAgentStore(tips: tips, donations: donations)
        defer { try? FileManager.default.removeItem(at: store.directory) }
        var measurement = Measurement()
        var bytes = 0
        for round in 0..<(runs + 3) {
            let process = Process()
            process.executableURL = agentExecutable
            process.arguments = ["status", "--json", "--store", store.directory.path]
            let out = Pipe()
            process.standardOutput = out
            var output = Data()
            let sample = {
                try process.run()
                output = out.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
            }
            if round < 3 {
                try sample()  // warm-up (page cache)
            } else {
                try measurement.time(sample)
            }
            guard process.terminationStatus == 0 else { throw ValidationError("status failed") }
            bytes = output.count
        }
        print(
            "agent-status: \(tips) tips × \(donations) donations, \(runs) runs, \(bytes) bytes of JSON — "
                + "mean \(format(measurement.mean.milliseconds)) ms, p50 \(format(measurement.percentile(0.5).milliseconds)) ms, "
                + "p99 \(format(measurement.percentile(0.99).milliseconds)) ms (target < 50 ms)")
    }
}

/// A status request over the local API of a running daemon (target: under 1 ms).
struct AgentAPI: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "agent-api", abstract: "Round trip of a status request over a running agent's local API.")

    @Option(help: "Catalog tips.") var tips = 100
    @Option(help: "Donations per tip's event.") var donations = 100
    @Option(help: "Timed requests.") var requests = 5000
    @Flag(help: "Ask for one tip instead of all.") var oneTip = false

    func run() throws {
        let store = try makeAgentStore(tips: tips, donations: donations)
        defer { try? FileManager.default.removeItem(at: store.directory) }
        let daemon = Process()
        daemon.executableURL = agentExecutable
        daemon.arguments = ["run", "--store", store.directory.path, "--log-level", "error"]
        try daemon.run()
        defer {
            daemon.terminate()
            daemon.waitUntilExit()
        }
        var client: LocalAPIClient?
        // Connect as soon as the socket accepts (bounded retries while the daemon starts).
        for _ in 0..<500 where client == nil {
            client = try? LocalAPIClient(path: store.socketPath)
            if client == nil { usleep(10_000) }
        }
        guard let client else { throw ValidationError("the agent did not start") }
        let request = oneTip ? #"{"op":"status","tip":"tip-7"}"# : #"{"op":"status"}"#
        for _ in 0..<200 { _ = try client.request(request) }  // warm-up
        var measurement = Measurement()
        var bytes = 0
        for _ in 0..<requests {
            try measurement.time { bytes = try client.request(request).utf8.count }
        }
        print(
            "agent-api: \(oneTip ? "one tip" : "\(tips) tips") × \(donations) donations, \(requests) requests, \(bytes) bytes — "
                + "mean \(format(measurement.mean.microseconds, 1)) µs, p50 \(format(measurement.percentile(0.5).microseconds, 1)) µs, "
                + "p99 \(format(measurement.percentile(0.99).microseconds, 1)) µs (target < 1 ms)")
    }
}
