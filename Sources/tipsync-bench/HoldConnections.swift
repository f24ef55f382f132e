import ArgumentParser
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Child process: opens one `GET /v1/live` stream per line (`TOKEN QUERY`, the query empty or
/// `?cursor=…`), each as its connection's first request, to a loopback port and keeps them idle
/// until killed. (A separate process, so the server's descriptors and memory are measured alone.)
struct HoldConnections: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "hold-connections", shouldDisplay: false)
    @Option var port: Int
    @Option(help: "File with one `TOKEN QUERY` per line.") var tokens: String

    func run() throws {
        let list = try String(contentsOfFile: tokens, encoding: .utf8).split(separator: "\n").map(String.init)
        var sockets: [Int32] = []
        for line in list {
            let (token, query) = (line.prefix { $0 != " " }, line.drop { $0 != " " }.dropFirst())
            let fd: Int32
            do {
                fd = try connectLoopback(port: port)
            } catch {
                throw BenchError("after \(sockets.count) connections: \(error)")
            }
            let request = "GET /v1/live\(query) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n\r\n"
            _ = request.withCString { send(fd, $0, strlen($0), 0) }
            sockets.append(fd)
        }
        // Wait for each stream's first event, so every connection is established server-side.
        var buffer = [UInt8](repeating: 0, count: 512)
        for fd in sockets { _ = recv(fd, &buffer, buffer.count, 0) }
        FileHandle.standardOutput.write(Data("held \(sockets.count)\n".utf8))
        while true { pause() }
    }

    static func spawn(port: Int, tokens: [String]) throws -> Process {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("tipsync-tokens-\(UUID().uuidString)")
        try tokens.joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = ["hold-connections", "--port", String(port), "--tokens", file.path]
        process.standardOutput = Pipe()
        try process.run()
        return process
    }

    /// Blocks until the child reports every connection established.
    static func waitUntilHeld(_ process: Process) async throws {
        guard let pipe = process.standardOutput as? Pipe else { return }
        let line = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: String(decoding: pipe.fileHandleForReading.availableData, as: UTF8.self))
            }
        }
        guard line.hasPrefix("held") else { throw BenchError("connection holder failed: \(line)") }
    }
}
