package import Foundation
import Testing
package import TipSyncCore
import TipSyncServer
package import TipSyncTestSupport

/// The real `tipsync-server` executable, as an operator runs it.
package enum ServerProcess {
    /// The built products directory (where the test bundle and `tipsync-server` live).
    package static var productsDirectory: URL {
        let path = ProcessInfo.processInfo.arguments[0]
        var url = URL(fileURLWithPath: path).deletingLastPathComponent()
        if url.lastPathComponent == "MacOS" {
            url = url.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        }
        return url
    }

    package static func run(_ arguments: [String]) async throws -> (status: Int32, stdout: String, stderr: String) {
        try await ChildProcess.run(productsDirectory.appendingPathComponent("tipsync-server").path, arguments)
    }
}

/// One `tipsync-server serve` process, spoken to over plain sockets.
package struct ServerUnderTest: Sendable {
    package let process: ChildProcess
    package let port: Int

    package init(process: ChildProcess, port: Int) {
        self.process = process
        self.port = port
    }

    package static func start(database: String, port: Int = FreePort.next(), arguments: [String] = []) async throws
        -> ServerUnderTest
    {
        let process = try ChildProcess(
            ServerProcess.productsDirectory.appendingPathComponent("tipsync-server").path,
            ["serve", "--http-port", String(port), "--database", database] + arguments)
        let ready = await process.stderr.waitFor("listening")
        try #require(ready, "tipsync-server did not start: \(process.stderr.text)")
        return ServerUnderTest(process: process, port: port)
    }

    package func kill() async {
        process.signal(SIGKILL)
        await process.exitStatus()
    }

    package func pullAll(token: String) async throws -> [Change] {
        var changes: [Change] = []
        var cursor: String?
        while true {
            let query = "limit=5000" + (cursor.map { "&cursor=\($0)" } ?? "")
            let (status, data) = try await RawConnection.exchange(
                port: port, method: "GET", path: "/v1/pull?" + query, headers: ["Authorization": "Bearer \(token)"])
            try #require(status == 200, "pull answered \(status)")
            let page = try JSONCoding.decode(PullResponse.self, from: data)
            changes += page.changes
            cursor = page.cursor
            if !page.more { return changes }
        }
    }
}
