import Foundation
import Testing
import TipSync
import TipSyncServerTestSupport
import TipSyncTestSupport

/// One device must never be able to stop the server for everyone: the connection defects found by
/// attacking a real `tipsync-server` process from outside (the in-process half is `HardeningTests`).
@Suite(.timeLimit(.minutes(5))) struct ConnectionHardeningTests {
    // MARK: Connections (real sockets)

    /// A real `tipsync-server` process with an account `conn` and a token for `phone`: connection
    /// tests run against their own process, so their sockets are out of reach of everything else
    /// the test process runs at the same time.
    static func processServer(_ arguments: [String]) async throws -> (
        server: ServerUnderTest, token: String
    ) {
        let directory = Scratch.path("tipsync-conn")
        let database = "sqlite:" + directory.appendingPathComponent("server.sqlite").path
        _ = try await ServerProcess.run(["accounts", "create", "conn", "--database", database])
        let token = try await ServerProcess.run([
            "tokens", "create", "--account", "conn", "--device", "phone", "--database", database,
        ]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        return (try await ServerUnderTest.start(database: database, arguments: arguments), token)
    }

    /// Connections that send nothing, only a CRLF, HTTP/0.9 junk or half a head were held forever.
    @Test(arguments: ["", "\r\n", "GET /\r\n", "GET /health HTTP/1.1\r\nHost: x\r\n"])
    func aConnectionWithoutACompleteHeadIsClosed(_ sent: String) async throws {
        // Long enough that the complete head of the `/health` check below arrives in time on a loaded
        // machine (0.3 s did not, once, with the whole suite and a benchmark running; 1 s did not, with
        // the suite's browser and Node tests beside it on 2 cores; 5 s did not, twice, in full runs:
        // the `/health` connection closed unanswered while the server ran).
        let (server, _) = try await Self.processServer(["--request-head-timeout", "15"])
        let connection = try await offPool { [port = server.port] in try RawConnection(port: port) }
        connection.send(sent)
        let (_, closed) = await connection.readUntilClosed(within: 60)
        #expect(closed)
        do {
            #expect(try await RawConnection.exchange(port: server.port, method: "GET", path: "/health").status == 200)
        } catch {
            // Once, on a clean clone's CI, all four cases had their `/health` connection reset at the
            // same moment: say whether the server was still running and what it wrote.
            Issue.record(
                "\(error); server running: \(server.process.isRunning); its log:\n\(server.process.stderr.text)")
        }
        await server.kill()
    }

    /// A keep-alive connection that goes silent after an answer is closed at the head timeout too
    /// (the timer armed for the first request is not moved per request, and must still catch it).
    @Test func aConnectionSilentAfterAnAnswerIsClosedAtTheHeadTimeout() async throws {
        // 3 s was too short once on a clean clone's CI with a build running beside it: the three
        // pipelined requests sent at once were not answered before the head timeout closed the
        // connection (0 answers). The timeout has to outlast a starved server's first answers.
        let (server, _) = try await Self.processServer([
            "--request-head-timeout", "10", "--request-body-timeout", "600",
        ])
        let connection = try await offPool { [port = server.port] in try RawConnection(port: port) }
        for _ in 0..<3 { connection.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n") }
        let (text, closed) = await connection.readUntilClosed(within: 60)
        #expect(closed)
        #expect(text.components(separatedBy: "HTTP/1.1 200").count == 4)
        await server.kill()
    }

    /// `Content-Length: 10000000000` and no body: refused at once with a JSON 413, connection closed.
    @Test func aDeclaredBodyAboveTheLimitIsRefusedAtOnce() async throws {
        // The refusal, not a timeout, must close it.
        let (server, token) = try await Self.processServer(["--request-body-timeout", "600"])
        let connection = try await offPool { [port = server.port] in try RawConnection(port: port) }
        connection.send(
            "POST /v1/push HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\n"
                + "Content-Type: application/json\r\nContent-Length: 10000000000\r\n\r\n")
        let (text, closed) = await connection.readUntilClosed(within: 20)
        #expect(closed)
        #expect(text.hasPrefix("HTTP/1.1 413"))
        #expect(text.contains(#""code":"body_too_large""#))
        await server.kill()
    }

    @Test func aBodyThatNeverEndsIsClosed() async throws {
        let (server, token) = try await Self.processServer(["--request-body-timeout", "0.3"])
        for head in [
            "Transfer-Encoding: chunked\r\n\r\n5\r\n{\"cha\r\n", "Content-Length: 100\r\n\r\n{\"changes\":",
        ] {
            let connection = try await offPool { [port = server.port] in try RawConnection(port: port) }
            connection.send(
                "POST /v1/push HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\n"
                    + "Content-Type: application/json\r\n" + head)
            let (_, closed) = await connection.readUntilClosed(within: 20)
            #expect(closed)
        }
        // Nothing stored: the device's highest stored seq is still 0.
        let device = try await RawConnection.exchange(
            port: server.port, method: "GET", path: "/v1/devices/phone", headers: ["Authorization": "Bearer \(token)"])
        #expect(String(decoding: device.body, as: UTF8.self).contains(#""highestSeq":0"#))
        await server.kill()
    }

    @Test func bytesTheParserCannotReadGetAJSONError() async throws {
        let fixture = try await ServerFixture.make()
        let server = try await LiveServer.start(store: fixture.store)
        let junk = try await RawConnection.request(port: server.port, "GET / HTTP/1.1\r\nHost x\r\n\r\n")
        #expect(junk.hasPrefix("HTTP/1.1 400"))
        #expect(junk.contains(#""code":"malformed_request""#))
        let method = try await RawConnection.request(port: server.port, "BREW /v1/push HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(method.hasPrefix("HTTP/1.1 405"))
        #expect(method.contains(#""code":"method_not_allowed""#))
        await server.stop()
    }

    /// 200 slow-loris connections trickling a byte a second must not stop anyone else. A real
    /// `tipsync-server` process, so its 200 accepted sockets are its own, not the test process's.
    @Test func othersAreServedWhileSlowLorisConnectionsTrickle() async throws {
        let directory = Scratch.path("tipsync-loris")
        let server = try await ServerUnderTest.start(
            database: "sqlite:" + directory.appendingPathComponent("server.sqlite").path,
            arguments: ["--request-head-timeout", "120"])  // so the lorises stay, however slow this machine
        let head = Array("GET /health HTTP/1.1\r\nHost: slow\r\nX-Padding: aaaaaaaaaaaaaaaaaaaa\r\n".utf8)
        let port = server.port
        let lorises = try await offPool { try (0..<200).map { _ in try RawConnection(port: port) } }
        var served = 0
        for second in 0..<4 {
            for loris in lorises { loris.send(bytes: [head[second]]) }
            for _ in 0..<5 {
                let answer = try await RawConnection.exchange(port: server.port, method: "GET", path: "/health")
                if answer.status == 200 { served += 1 }
            }
            try await Task.sleep(for: .seconds(1))  // the attack's pace, not a wait for a result
        }
        #expect(served == 20)
        // The trickling connections are still open (under the head timeout): they were tolerated, not the cause.
        #expect(lorises.allSatisfy { $0.send(bytes: [head[4]]) })
        await server.kill()
    }

    /// A long-polling client that closed its side was released only ~19 s later; live streams too.
    /// A real `tipsync-server` process: its sockets are its own, out of reach of anything else the
    /// test process does with descriptors; the counts are read from its `/metrics`.
    @Test func clientsThatLeaveAreReleasedAtOnceAndCountedCorrectly() async throws {
        let directory = Scratch.path("tipsync-leave")
        let database = "sqlite:" + directory.appendingPathComponent("server.sqlite").path
        #expect(try await ServerProcess.run(["accounts", "create", "leave", "--database", database]).status == 0)
        let token = try await ServerProcess.run([
            "tokens", "create", "--account", "leave", "--device", "laptop", "--database", database,
        ]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        // Twenty streams of one device: more than a device holds by default. The head timeout and the
        // long-polls' wait well beyond the test's waits: under the whole suite on two cores the 20
        // long-polls (`wait=60`) were all answered, their minute over, before the counts were read
        // (a clean-clone CI run: "the server counted (longPolls: 0.0, live: 20.0)").
        let server = try await ServerUnderTest.start(
            database: database,
            arguments: [
                "--max-live-streams-per-device", "20", "--request-head-timeout", "600", "--max-wait", "600",
            ])
        let port = server.port
        @Sendable func counts() async throws -> (longPolls: Double?, live: Double?) {
            let text = String(
                decoding: try await RawConnection.exchange(port: port, method: "GET", path: "/metrics").body,
                as: UTF8.self)
            func value(_ name: String) -> Double? {
                text.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap {
                    Double($0.dropFirst(name.count + 1))
                }
            }
            return (value("tipsync_long_polls"), value("tipsync_live_connections"))
        }
        var clients: [RawConnection] = []
        for index in 0..<40 {
            let connection = try await offPool { try RawConnection(port: port) }
            let target = index.isMultiple(of: 2) ? "/v1/pull?wait=600" : "/v1/live"
            connection.send("GET \(target) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\n\r\n")
            clients.append(connection)
        }
        var seen: (longPolls: Double?, live: Double?) = (nil, nil)
        try await eventually {
            seen = try await counts()
            return seen == (20, 20)
        }
        // Said when it fails (it did, in full local runs under load, with no clue which count lagged),
        // with what the first long-poll received, if anything.
        if seen.longPolls != 20 || seen.live != 20 {
            let answered = await clients[0].read(until: "\r\n\r\n", within: 1)
            Issue.record("the server counted \(seen); the first long-poll received: '\(answered.prefix(400))'")
        }
        for client in clients { client.shutdownWrite() }
        try await eventually { try await counts() == (0, 0) }
        for client in clients {
            let (text, closed) = await client.readUntilClosed(within: 20)
            #expect(closed, "still open after: \(text.suffix(200))")
        }
        await server.kill()
    }
}
