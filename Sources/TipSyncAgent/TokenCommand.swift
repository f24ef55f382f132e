import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs `tipsync-agent init --token-command CMD`: `/bin/sh -c CMD`, whose standard output (trimmed)
/// is the credential. A command that fails or prints nothing is an error naming the command.
enum TokenCommand {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Runs the command on a thread of its own: waiting for a process must never hold one of the
    /// few threads Swift concurrency shares.
    static func run(_ command: String) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try runBlocking(command) }) }
        }
    }

    static func runBlocking(_ command: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Read while it runs (a long output must not fill the pipe and stall it), and stop when it has
        // exited rather than at end of file: a process started meanwhile elsewhere in this program may
        // have inherited the pipe's write end and keep it open.
        let descriptor = output.fileHandleForReading.fileDescriptor
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        func drain() -> Bool {
            while true {
                let count = read(descriptor, &buffer, buffer.count)
                if count > 0 {
                    data += buffer[0..<count]
                } else {
                    return count == 0  // end of file
                }
            }
        }
        while process.isRunning {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            _ = poll(&poller, 1, 50)
            if drain() { break }
        }
        process.waitUntilExit()
        _ = drain()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "the token command '\(command)' exited with status \(process.terminationStatus)")
        }
        let token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !token.isEmpty, !token.contains(where: \.isNewline) else {
            throw Failure(description: "the token command '\(command)' must print one token on one line")
        }
        return token
    }
}
