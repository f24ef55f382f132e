import Foundation
import Testing
import TipSyncTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// What a child started by the tests holds of the test process: its standard descriptors and the
/// ones it is given, nothing else. SwiftNIO's sockets are not close-on-exec, and an agent or a
/// PostgreSQL server holding a copy of an in-process server's connection kept that connection open
/// after the server closed it (a test waited for a close, a client's next request on it was reset).
@Suite struct ChildProcessTests {
    @Test func aChildHoldsOnlyItsStandardDescriptorsAndTheOnesItIsGiven() async throws {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(socket > 3)
        defer { close(socket) }
        #expect(fcntl(socket, F_GETFD) & FD_CLOEXEC == 0)
        let given = try ChildProcess.pipe()
        defer { close(given.read) }
        let child = try ChildProcess(
            "/bin/sh",
            [
                "-c",
                "for fd in 3 \(socket); do if [ -e /proc/self/fd/$fd ]; then echo $fd open; else echo $fd closed; fi; done",
            ],
            descriptors: [3: given.write])
        close(given.write)
        #expect(await child.exitStatus() == 0)
        #expect(await child.stdout.all() == "3 open\n\(socket) closed\n")
    }
}
