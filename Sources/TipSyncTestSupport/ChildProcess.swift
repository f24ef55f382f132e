public import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A child process started with `posix_spawn` and reaped by a blocking `waitpid` on a thread of its
/// own. Foundation's `Process` on Linux reaps through a SIGCHLD dispatch source, and under a loaded
/// test run it has left a finished child a zombie that nothing ever waited for, hanging the suite;
/// a dedicated `waitpid` cannot miss the exit.
///
/// stdin is `/dev/null`; stdout and stderr are pipes read continuously on threads of their own, so
/// a chatty child never blocks on a full pipe and tests can wait for a log line instead of sleeping.
/// Both pipes are close-on-exec in this process, so no other child inherits them and each reaches
/// its end when this child (and whatever it started with them) is gone.
public final class ChildProcess: Sendable {
    public let pid: pid_t
    public let stdout: ChildOutput
    public let stderr: ChildOutput
    private let exit = Mutex<(status: Int32?, waiters: [CheckedContinuation<Int32, Never>])>((nil, []))

    /// Starts `executable` (a path) with `arguments`; `environment` is added to this process's own.
    /// `descriptors` maps the child's descriptor numbers (3 and up) onto descriptors of this process
    /// (a pipe's end, say); the caller closes its copies after the start.
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:],
        directory: String? = nil, descriptors: [Int32: Int32] = [:]
    ) throws {
        let out = try Self.pipe()
        let err = try Self.pipe()
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, out.write, 1)
        posix_spawn_file_actions_adddup2(&actions, err.write, 2)
        for (child, parent) in descriptors { posix_spawn_file_actions_adddup2(&actions, parent, child) }
        // Nothing else of this process reaches the child (see ``closeInheritedDescriptors(from:_:)``).
        closeInheritedDescriptors(from: (descriptors.keys.max() ?? 2) + 1, &actions)
        if let directory { _ = spawnFileActionsAddChdir(&actions, directory) }
        let merged = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        var cArguments = ([executable] + arguments).map { strdup($0) } + [nil]
        var cEnvironment = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in cArguments { free(pointer) }
            for pointer in cEnvironment { free(pointer) }
        }
        var spawnedPid: pid_t = 0
        let spawned = posix_spawn(&spawnedPid, executable, &actions, nil, &cArguments, &cEnvironment)
        close(out.write)
        close(err.write)
        guard spawned == 0 else {
            close(out.read)
            close(err.read)
            throw ChildProcessError(description: "cannot start \(executable): error \(spawned)")
        }
        let pid = spawnedPid
        self.pid = pid
        stdout = ChildOutput(reading: out.read)
        stderr = ChildOutput(reading: err.read)
        Thread.detachNewThread { [self] in
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            // Exit code when it exited, the signal number when a signal ended it (as `Process` reports).
            let code = (status & 0x7f) == 0 ? (status >> 8) & 0xff : status & 0x7f
            let waiters = exit.withLock { state in
                state.status = code
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume(returning: code) }
        }
    }

    /// A pipe whose both ends are close-on-exec (see ``ChildProcess``).
    public static func pipe() throws -> (read: Int32, write: Int32) {
        var fds: [Int32] = [0, 0]
        guard createPipe(&fds, O_CLOEXEC) == 0 else {
            throw ChildProcessError(description: "pipe: errno \(errno)")
        }
        return (fds[0], fds[1])
    }

    /// Whether the child has not been reaped yet.
    public var isRunning: Bool { exit.withLock { $0.status == nil } }

    /// Sends `signal` unless the child is already reaped (its pid could be reused by then).
    public func signal(_ signal: Int32) {
        exit.withLock { state in
            if state.status == nil { _ = kill(pid, signal) }
        }
    }

    /// SIGTERM.
    public func terminate() { signal(SIGTERM) }

    /// Waits for the exit: the exit code, or the number of the signal that ended the child.
    @discardableResult
    public func exitStatus() async -> Int32 {
        await withCheckedContinuation { continuation in
            let status: Int32? = exit.withLock { state in
                if state.status == nil { state.waiters.append(continuation) }
                return state.status
            }
            if let status { continuation.resume(returning: status) }
        }
    }

    /// Runs `executable` to completion and returns its exit status and output.
    public static func run(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:],
        directory: String? = nil
    ) async throws -> (status: Int32, stdout: String, stderr: String) {
        let child = try ChildProcess(executable, arguments, environment: environment, directory: directory)
        let status = await child.exitStatus()
        return (status, await child.stdout.all(), await child.stderr.all())
    }
}

public struct ChildProcessError: Error, CustomStringConvertible {
    public let description: String
    public init(description: String) { self.description = description }
}

/// One output pipe of a `ChildProcess`, read to its end on a thread of its own.
public final class ChildOutput: Sendable {
    private let state = Mutex<State>(State())

    private struct State {
        var text = ""
        var ended = false
        var lineWaiters: [(String, CheckedContinuation<Bool, Never>)] = []
        var endWaiters: [CheckedContinuation<String, Never>] = []
    }

    init(reading fd: Int32) {
        Thread.detachNewThread { [self] in
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                let chunk = String(decoding: buffer[0..<count], as: UTF8.self)
                let ready = state.withLock { state in
                    state.text += chunk
                    let text = state.text
                    let ready = state.lineWaiters.filter { text.contains($0.0) }
                    state.lineWaiters.removeAll { text.contains($0.0) }
                    return ready
                }
                for (_, waiter) in ready { waiter.resume(returning: true) }
            }
            close(fd)
            let (text, lineWaiters, endWaiters) = state.withLock { state in
                state.ended = true
                defer {
                    state.lineWaiters = []
                    state.endWaiters = []
                }
                return (state.text, state.lineWaiters, state.endWaiters)
            }
            for (_, waiter) in lineWaiters { waiter.resume(returning: false) }
            for waiter in endWaiters { waiter.resume(returning: text) }
        }
    }

    /// What has been read so far.
    public var text: String { state.withLock { $0.text } }

    /// Waits until the output contains `text`; `false` if the pipe ended (the child exited) first.
    public func waitFor(_ text: String) async -> Bool {
        await withCheckedContinuation { continuation in
            let resolved: Bool? = state.withLock { state in
                if state.text.contains(text) { return true }
                if state.ended { return false }
                state.lineWaiters.append((text, continuation))
                return nil
            }
            if let resolved { continuation.resume(returning: resolved) }
        }
    }

    /// Waits for the end of the pipe and returns everything read.
    public func all() async -> String {
        await withCheckedContinuation { continuation in
            let text: String? = state.withLock { state in
                if state.ended { return state.text }
                state.endWaiters.append(continuation)
                return nil
            }
            if let text { continuation.resume(returning: text) }
        }
    }
}

/// Makes a spawned child close every descriptor from `lowest` up, once the file actions before
/// this one have run. SwiftNIO's sockets and URLSession's are not close-on-exec: a child spawned
/// while they are open would hold them — a listener, a connection a server closed — for as long as
/// it lives, so that a peer never sees its connection end (a test waits for a close that comes
/// only when an agent or a PostgreSQL started meanwhile exits, and a request sent on such a
/// connection is reset then).
func closeInheritedDescriptors(from lowest: Int32, _ actions: inout posix_spawn_file_actions_t) {
    #if os(Linux)
        _ = spawnFileActionsAddClosefrom(&actions, lowest)
    #endif
}

#if os(Linux)
    // glibc 2.34 and later; Swift's Glibc module leaves it out, as it does the two below.
    @_silgen_name("posix_spawn_file_actions_addclosefrom_np")
    private func spawnFileActionsAddClosefrom(
        _ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ lowest: Int32
    ) -> Int32

    // glibc has both since 2.29 (pipe2 for much longer), but Swift's Glibc module leaves them out
    // (they are behind _GNU_SOURCE). pipe2 creates both ends close-on-exec atomically: with pipe() and a
    // later fcntl(), a child spawned by another thread in between would inherit the write end, and this
    // pipe would never reach its end while that child lives.
    @_silgen_name("pipe2")
    private func createPipe(_ fds: UnsafeMutablePointer<Int32>, _ flags: Int32) -> Int32

    @_silgen_name("posix_spawn_file_actions_addchdir_np")
    private func spawnFileActionsAddChdir(
        _ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ path: UnsafePointer<CChar>
    ) -> Int32
#else
    private func createPipe(_ fds: UnsafeMutablePointer<Int32>, _ flags: Int32) -> Int32 {
        guard pipe(fds) == 0 else { return -1 }
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        return 0
    }

    private func spawnFileActionsAddChdir(
        _ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ path: UnsafePointer<CChar>
    ) -> Int32 {
        posix_spawn_file_actions_addchdir_np(actions, path)
    }
#endif
