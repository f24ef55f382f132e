import Testing
import TipSyncNetworking

/// ``LiveConnectionState``: who writes a live connection's news, and when it closes — tried on every
/// order of wake-ups, writes and the stream's end up to a depth, not only the orders a test server
/// happens to produce.
@Suite struct LiveConnectionStateTests {
    @Test func aWakeUpWhileTheOpeningIsWrittenIsWrittenByThatWriter() {
        var state = LiveConnectionState()
        #expect(state.woken() == .none)  // the opening's writer is on it
        #expect(state.wrote() == .writeAgain)  // … so it writes the news before it stops
        #expect(state.wrote() == .stop)
        #expect(state.phase == .idle)
        #expect(state.woken() == .write)  // the next wake-up starts a writer
    }

    @Test func theStreamsEndClosesAtOnceWithoutAWriterAndAfterItOtherwise() {
        var idle = LiveConnectionState()
        #expect(idle.wrote() == .stop)
        #expect(idle.streamEnded() == .close)
        #expect(idle.streamEnded() == .none)
        #expect(idle.woken() == .none)  // nothing is written after the response ended

        var writing = LiveConnectionState()
        #expect(writing.woken() == .none)
        #expect(writing.streamEnded() == .writerCloses)
        #expect(writing.wrote() == .close)  // ended: the news a wake-up brought is not written
        #expect(writing.phase == .closed)
    }

    /// A model of the connection around the state machine: wake-ups set news, a writer takes the news
    /// when it starts and on each `writeAgain`, the end comes once.
    struct World: Hashable {
        var state = LiveConnectionState()
        var writers = 1  // the opening's
        var newsUntaken = false
        var closes = 0
        var endedCalls = 0

        enum Event: CaseIterable { case wake, writerFinishes, end }

        /// `nil` when the event cannot happen now.
        func after(_ event: Event) -> World? {
            var next = self
            switch event {
            case .wake:
                next.newsUntaken = true
                if next.state.woken() == .write {
                    next.writers += 1
                    next.newsUntaken = false
                }
            case .writerFinishes:
                guard writers > 0 else { return nil }
                switch next.state.wrote() {
                case .writeAgain: next.newsUntaken = false
                case .stop: next.writers -= 1
                case .close:
                    next.writers -= 1
                    next.closes += 1
                }
            case .end:
                guard endedCalls == 0 else { return nil }
                next.endedCalls = 1
                if next.state.streamEnded() == .close { next.closes += 1 }
            }
            return next
        }
    }

    /// Every order of up to ten events (every reachable state, as it turns out): never two writers, never two closes, nothing written after
    /// the close; once quiet, no wake-up's news is left untaken while the stream runs, and an ended
    /// stream's connection is closed.
    @Test func everyOrderOfEventsKeepsOneWriterLosesNoWakeUpAndClosesOnce() {
        var frontier: Set<World> = [World()]
        var seen: Set<World> = []
        for _ in 0..<10 {
            var next: Set<World> = []
            for world in frontier {
                for event in World.Event.allCases {
                    guard let after = world.after(event) else { continue }
                    #expect(after.writers <= 1, "two writers: \(after)")
                    #expect(after.closes <= 1, "closed twice: \(after)")
                    if after.closes == 1 { #expect(after.state.phase == .closed) }
                    if after.state.phase == .closed { #expect(after.writers == 0) }
                    if after.writers == 0 {
                        // Quiet: nothing lost while it runs, and an end has closed it.
                        if after.endedCalls == 0 { #expect(!after.newsUntaken, "a wake-up was lost: \(after)") }
                        if after.endedCalls == 1 { #expect(after.closes == 1, "ended but open: \(after)") }
                    }
                    if seen.insert(after).inserted { next.insert(after) }
                }
            }
            frontier = next
        }
        // The whole space is small, and every phase of it was reached.
        let phases = Set(seen.map(\.state.phase))
        #expect(phases == [.writing(again: false), .writing(again: true), .idle, .closed])
    }
}
