import Foundation
import Testing
import TipSyncAgent
import TipSyncTestSupport

/// The example catalog's `welcome` content, as every report of it carries it (issue 73, item 3).
let welcomeContent =
    #""title":"Welcome to Yards","message":"Close this tip here and it stays closed on your phone and every other device.","image":"sparkles","actions":[]"#

/// The real `tipsync-server` and `tipsync-agent` executables, as people and scripts use them.
@Suite struct AgentEndToEndTests {
    @Test func readmeWalkthroughRunsAsWritten() async throws {
        let readme = try String(contentsOf: packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let marker = try #require(readme.range(of: "<!-- walkthrough -->\n```sh\n"))
        let end = try #require(readme.range(of: "\n```", range: marker.upperBound..<readme.endIndex))
        // Everything as written except the build step (this test runs inside `swift test`'s build).
        let script = readme[marker.upperBound..<end.lowerBound].split(separator: "\n", omittingEmptySubsequences: false)
            .filter { $0 != "swift build" }.joined(separator: "\n")
        let demo = scratchDirectory()
        let (instrumented, outputs) = ReadmeOutputs.instrument(script)
        #expect(outputs.count == 2)
        let result = try await ChildProcess.run(
            "/bin/bash", ["-e", "-c", instrumented],
            environment: [
                "DEMO": demo.path, "PORT": String(FreePort.next()),
                "PATH": productsDirectory.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"),
            ], directory: packageRoot.path)
        let output = result.stdout
        #expect(result.status == 0, "stderr: \(result.stderr)")
        ReadmeOutputs.check(output, against: outputs)
        #expect(
            output.contains(
                #"{"id":"welcome","status":"invalidated","reason":"tipClosed","displayCount":0,\#(welcomeContent)}"#))
        // The walkthrough waits for the server before `init` (issue 73, item 7): the token is checked.
        #expect(!result.stderr.contains("not checked yet"), "stderr: \(result.stderr)")
    }

    @Test func aDismissalReachesAnotherDeviceAfterSyncAndErrorsAreOneClearLine() async throws {
        let directory = scratchDirectory()
        let server = try await TestServer(directory: directory)
        try await server.start()
        defer { server.terminate() }
        let phone = try await TestAgent("phone", in: directory, server: server)
        let laptop = try await TestAgent(
            "laptop", in: directory, server: server, initOptions: ["--first-sync-timeout", "600"])

        // A store that has never synced holds its tips (protocol.md §17.1) from `init` on.
        #expect(try await laptop.status("welcome").status == "pending")
        try await phone.check(["invalidate", "welcome"])
        try await phone.check(["sync"])
        #expect(try await laptop.status("welcome").status == "pending")  // not synced yet: still held
        try await laptop.check(["sync"])
        let after = try await laptop.status("welcome")
        #expect(after.status == "invalidated" && after.reason == "tipClosed")

        // The whole report's shape.
        let all = try await laptop.check(["status", "--json"])
        #expect(
            all == #"{"tips":[{"id":"favorite","status":"pending","reason":"rule","displayCount":0,"#
                + #""title":"Save as a Favorite","message":"Your favorites always appear at the top.","image":"star","#
                + #""actions":[{"id":"learn-more","title":"Learn More"}]},"#
                + #"{"id":"upgrade","status":"available","reason":null,"displayCount":0,"title":"Go Pro","#
                + #""message":"Unlimited yards and offline maps.","image":null,"actions":[]},"#
                + #"{"id":"welcome","status":"invalidated","reason":"tipClosed","displayCount":0,\#(welcomeContent)},"#
                + #"{"id":"search","status":"pending","reason":"rule","displayCount":0,"title":"Search every yard","#
                + #""message":"Type a street or a plant name.","image":"magnifyingglass","actions":[]}]}"# + "\n")

        // Errors: one line on stderr, exit status 1, nothing written.
        let before = try await phone.check(["export-history", "-"])
        let cases: [([String], String)] = [
            (["status", "nope"], "unknown tip 'nope' (the catalog has: favorite, upgrade, welcome, search)"),
            (["display", "nope"], "unknown tip 'nope'"),
            (["param", "set", "plan", "pro"], "the value is not valid JSON: pro"),
            (["param", "set", "plan", "3"], "parameter 'plan' holds string values; got number 3"),
            (["param", "set", "nope", "3"], "unknown parameter 'nope'"),
            (["param", "set", "inTrial", "true"], "parameter 'inTrial' is transient"),
            (["donate", "viewed-yard", "--value", "{yardID: 7}"], "--value is not valid JSON"),
            (["catalog", "load", "/nonexistent.json"], "cannot read /nonexistent.json"),
        ]
        for (arguments, message) in cases {
            let result = try await phone.run(arguments)
            #expect(result.status == 1, "\(arguments)")
            #expect(result.stderr.hasPrefix("tipsync-agent: ") && result.stderr.contains(message), "\(result.stderr)")
            #expect(result.stderr.filter { $0 == "\n" }.count == 1, "\(result.stderr)")
        }
        #expect(try await phone.check(["export-history", "-"]) == before)
        let missing = try await runTool("tipsync-agent", ["status", "--store", directory.path + "/nowhere"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("no agent store at \(directory.path)/nowhere; run `tipsync-agent init"))

        // A broken catalog file is refused and the stored one kept.
        let broken = directory.appendingPathComponent("broken.json")
        try Data(#"{"tips":[{"id":"x"}]}"#.utf8).write(to: broken)
        let refused = try await phone.run(["catalog", "load", broken.path])
        #expect(refused.status == 1 && refused.stderr.contains("tips[0].title: missing"))
        #expect(try await phone.status("favorite").status == "pending")
    }

    /// A command ends its process without freeing the replica (OpenedAgents): it must still close
    /// the store, its write-ahead log checkpointed into the database file and emptied, so the next
    /// command — or a copy of the database file alone — finds everything written.
    @Test func aCommandEndsWithItsStoreClosedAndEverythingWritten() async throws {
        let directory = scratchDirectory()
        let server = try await TestServer(directory: directory)
        try await server.start()
        defer { server.terminate() }
        let phone = try await TestAgent("phone", in: directory, server: server)
        let database = URL(fileURLWithPath: phone.store).appendingPathComponent("replica/replica.sqlite")
        for arguments in [["invalidate", "welcome"], ["donate", "viewed-yard", "--value", "7"], ["sync"]] {
            try await phone.check(arguments)
            let log = try? FileManager.default.attributesOfItem(atPath: database.path + "-wal")[.size] as? Int
            #expect((log ?? 0) == 0, "after \(arguments)")
        }
        // The database file alone (no log beside it) holds the dismissal.
        let copy = directory.appendingPathComponent("copy")
        try FileManager.default.createDirectory(
            at: copy.appendingPathComponent("replica"), withIntermediateDirectories: true)
        for file in ["agent.json", "catalog.json"] {
            let source = URL(fileURLWithPath: phone.store).appendingPathComponent(file)
            if FileManager.default.fileExists(atPath: source.path) {
                try FileManager.default.copyItem(at: source, to: copy.appendingPathComponent(file))
            }
        }
        try FileManager.default.copyItem(at: database, to: copy.appendingPathComponent("replica/replica.sqlite"))
        let report = try await runTool("tipsync-agent", ["status", "welcome", "--json", "--store", copy.path])
        #expect(report.status == 0, "\(report.stderr)")
        #expect(report.stdout.contains(#""status":"invalidated""#), "\(report.stdout)")
    }

    @Test func runningDaemonsCarryADismissalLiveAndServeTheLocalAPI() async throws {
        let directory = scratchDirectory()
        let server = try await TestServer(directory: directory)
        try await server.start()
        defer { server.terminate() }
        let phone = try await TestAgent("phone", in: directory, server: server)
        let laptop = try await TestAgent("laptop", in: directory, server: server)
        let phoneDaemon = try await phone.startDaemon()
        let laptopDaemon = try await laptop.startDaemon()

        // A second daemon on the same store is refused.
        let second = try await laptop.run(["run"])
        #expect(second.status == 1 && second.stderr.contains("already running"))

        // The laptop watches over its socket; the phone's CLI (beside its daemon) dismisses.
        let watcher = try LocalAPIClient(path: laptop.socketPath)
        try watcher.send(#"{"op":"watch","tip":"welcome"}"#)
        #expect(
            try await watcher.nextLine()
                == #"{"id":"welcome","status":"available","reason":null,"displayCount":0,\#(welcomeContent)}"#)
        let started = ContinuousClock.now
        try await phone.check(["invalidate", "welcome"])
        #expect(
            try await watcher.nextLine()
                == #"{"id":"welcome","status":"invalidated","reason":"tipClosed","displayCount":0,\#(welcomeContent)}"#)
        print("dismiss on phone (CLI) → laptop watch line: \(ContinuousClock.now - started)")
        // With the daemon up, `status` asks it over the socket; same answers, same errors.
        let viaDaemon = try await laptop.status("welcome")
        #expect(viaDaemon.status == "invalidated" && viaDaemon.reason == "tipClosed")
        let unknown = try await laptop.run(["status", "nope"])
        #expect(
            unknown.status == 1
                && unknown.stderr
                    == "tipsync-agent: unknown tip 'nope' (the catalog has: favorite, upgrade, welcome, search)\n"
        )

        // The local API: requests and clear errors, one line each.
        let api = try LocalAPIClient(path: laptop.socketPath)
        #expect(
            try await api.ask(#"{"op":"status","tip":"welcome"}"#)
                == #"{"ok":true,"tips":[{"id":"welcome","status":"invalidated","reason":"tipClosed","displayCount":0,\#(welcomeContent)}]}"#
        )
        #expect(try await api.ask(#"{"op":"param-set","name":"inTrial","value":true}"#) == #"{"ok":true}"#)
        #expect(try await api.ask(#"{"op":"param-get","name":"inTrial"}"#) == #"{"ok":true,"value":true}"#)
        #expect(try await api.ask(#"{"op":"status","tip":"upgrade"}"#).contains(#""status":"pending""#))
        #expect(try await api.ask(#"{"op":"donate","event":"viewed-yard","value":{"yardID":7}}"#) == #"{"ok":true}"#)
        #expect(try await api.ask(#"{"op":"sync"}"#) == #"{"ok":true}"#)
        #expect(try await api.ask(#"{"op":"display"}"#).contains(#"op 'display' needs \"tip\""#))
        #expect(try await api.ask(#"{"op":"fly"}"#).contains(#""code":"bad-request""#))
        let notJSON = try await api.ask("{nope")
        #expect(notJSON.contains(#""code":"bad-json""#) && notJSON.contains("not valid JSON: malformed JSON at byte"))
        #expect(try await api.ask(#"{"op":"invalidate","tip":"x"}"#).contains(#""code":"unknown-tip""#))

        // What the laptop does through its API reaches the phone's watchers live.
        let phoneAPI = try LocalAPIClient(path: phone.socketPath)
        try phoneAPI.send(#"{"op":"watch","tip":"welcome"}"#)
        #expect(try await phoneAPI.nextLine()?.contains(#""status":"invalidated""#) == true)
        #expect(try await api.ask(#"{"op":"reset-eligibility","tip":"welcome"}"#) == #"{"ok":true}"#)
        #expect(
            try await phoneAPI.nextLine()
                == #"{"id":"welcome","status":"available","reason":null,"displayCount":0,\#(welcomeContent)}"#)
        // A display there throttles welcome here too (daily display frequency, counted on all devices).
        #expect(try await api.ask(#"{"op":"display","tip":"upgrade","duration":2}"#) == #"{"ok":true}"#)
        #expect(
            try await phoneAPI.nextLine()
                == #"{"id":"welcome","status":"pending","reason":"displayFrequency","displayCount":0,\#(welcomeContent)}"#
        )

        // SIGTERM: clean exit, socket removed.
        #expect(await phoneDaemon.stop() == 0)
        #expect(await laptopDaemon.stop() == 0)
        #expect(!FileManager.default.fileExists(atPath: laptop.socketPath))
    }
}
