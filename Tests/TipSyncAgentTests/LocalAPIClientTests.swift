import Foundation
import Synchronization
import Testing
import TipSyncAgent

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

@Suite struct LocalAPIClientTests {
    /// A failed connect closed its socket in `init` and again in `deinit` (a class's deinit runs
    /// when its init throws): the second close hit whatever file another thread had opened on the
    /// freed number in between — in the daemon, which probes its socket path at start, that could
    /// be its own database. Here a second thread keeps opening pipes while this one probes a path
    /// nobody listens on; with the fix no pipe is ever closed under it (it can only fail when the
    /// defect is present).
    @Test func aFailedConnectClosesOnlyItsOwnDescriptor() async throws {
        let path = "/tmp/tsa-none-\(UUID().uuidString.prefix(8)).sock"
        let stop = Atomic(false)
        let damaged = Atomic(0)
        let opener = Thread {
            var ends: [Int32] = [0, 0]
            while !stop.load(ordering: .relaxed) {
                guard pipe(&ends) == 0 else { continue }
                for _ in 0..<50 where fcntl(ends[0], F_GETFD) == -1 || fcntl(ends[1], F_GETFD) == -1 {
                    damaged.add(1, ordering: .relaxed)
                    break
                }
                close(ends[0])
                close(ends[1])
            }
        }
        opener.start()
        for _ in 0..<20_000 { #expect(!LocalAPIClient.isListening(path)) }
        stop.store(true, ordering: .relaxed)
        #expect(damaged.load(ordering: .relaxed) == 0)
    }
}
