import Testing
import TipSyncServer
import TipSyncServerTestSupport

/// How many event loops `tipsync-server serve` asks SwiftNIO for (``EventLoopCount``).
@Suite struct EventLoopCountTests {
    @Test func oneLoopOnTwoCoresOrFewerElseSwiftNIOsDefault() {
        #expect(EventLoopCount.suggested(coreCount: 1, environment: [:]) == 1)
        #expect(EventLoopCount.suggested(coreCount: 2, environment: [:]) == 1)
        #expect(EventLoopCount.suggested(coreCount: 3, environment: [:]) == nil)
        #expect(EventLoopCount.suggested(coreCount: 16, environment: [:]) == nil)
    }

    @Test func swiftNIOsOwnVariableWins() {
        #expect(EventLoopCount.suggested(coreCount: 2, environment: ["NIO_SINGLETON_GROUP_LOOP_COUNT": "2"]) == nil)
    }
}
