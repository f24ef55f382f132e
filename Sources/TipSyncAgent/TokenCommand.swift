import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs `tipsync-agent init --token-command CMD`: `/bin/sh -c CMD`, whose standard output (trimmed)
/// is the credential. A command that fails or prints nothing is an error naming the command.
///
/// The command is started with `posix_spawn` and reaped with `waitpid` on its own pid. Foundation's
/// `Process` on Linux reaps through a SIGCHLD source, and in a busy process (the test suite, with
/// many children) it has left an exited command unreaped, and its caller waiting for ever.
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
        var ends: [Int32] = [0, 0]
        // Both ends close-on-exec: no other child of this program inherits the command's output.
        guard closeOnExecPipe(&ends) == 0 else {
            throw Failure(description: "cannot run the token command '\(command)': pipe failed (errno \(errno))")
        }
        let (reading, writing) = (ends[0], ends[1])
        defer { close(reading) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, writing, 1)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Nothing else of the agent reaches the command: its sockets (SwiftNIO's are not close-on-exec)
        // would stay open for as long as whatever the command leaves running.
        #if os(Linux)
            _ = spawnFileActionsAddClosefrom(&actions, 3)
        #else
            posix_spawn_file_actions_addinherit_np(&actions, 2)
            _ = posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_CLOEXEC_DEFAULT))
        #endif
        let words: [String] = ["/bin/sh", "-c", command]
        var arguments = words.map { strdup($0) } + [nil]
        defer { for argument in arguments { free(argument) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, "/bin/sh", &actions, &attributes, &arguments, environ)
        close(writing)
        guard spawned == 0 else {
            throw Failure(
                description: "cannot run the token command '\(command)': /bin/sh did not start (error \(spawned))")
        }
        // Read while it runs (a long output must not fill the pipe and stall it), and stop when it has
        // exited rather than at end of file: something the command started in the background may keep
        // its output open.
        _ = fcntl(reading, F_SETFL, fcntl(reading, F_GETFL) | O_NONBLOCK)
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        func drain() {
            while true {
                let count = read(reading, &buffer, buffer.count)
                if count > 0 {
                    data += buffer[0..<count]
                } else if count < 0, errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
        var status: Int32 = 0
        while true {
            var poller = pollfd(fd: reading, events: Int16(POLLIN), revents: 0)
            _ = poll(&poller, 1, 50)
            drain()
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid { break }
            if reaped < 0, errno != EINTR {
                throw Failure(description: "could not wait for the token command '\(command)' (errno \(errno))")
            }
        }
        drain()
        let exited = status & 0x7f == 0
        guard exited, (status >> 8) & 0xff == 0 else {
            let how = exited ? "exited with status \((status >> 8) & 0xff)" : "was ended by signal \(status & 0x7f)"
            throw Failure(description: "the token command '\(command)' \(how)")
        }
        let token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !token.isEmpty, !token.contains(where: \.isNewline) else {
            throw Failure(description: "the token command '\(command)' must print one token on one line")
        }
        return token
    }
}

#if os(Linux)
    // Swift's Glibc module leaves pipe2 out (it is behind _GNU_SOURCE). It makes both ends
    // close-on-exec at once: with pipe() and a later fcntl(), a child spawned by another thread in
    // between would inherit the write end.
    @_silgen_name("pipe2")
    private func pipe2(_ fds: UnsafeMutablePointer<Int32>, _ flags: Int32) -> Int32

    private func closeOnExecPipe(_ fds: UnsafeMutablePointer<Int32>) -> Int32 { pipe2(fds, O_CLOEXEC) }

    // glibc 2.34 and later, also left out of the Glibc module.
    @_silgen_name("posix_spawn_file_actions_addclosefrom_np")
    private func spawnFileActionsAddClosefrom(
        _ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ lowest: Int32
    ) -> Int32
#else
    private func closeOnExecPipe(_ fds: UnsafeMutablePointer<Int32>) -> Int32 {
        guard pipe(fds) == 0 else { return -1 }
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        return 0
    }
#endif
