import NIOCore
import Synchronization

/// Connections that have not yet sent a complete request head, oldest first. When connections reach
/// the server's maximum, the oldest of these is closed to make room (``ConnectionCounter``): idle
/// sockets — a scanner, a slow-loris, a client that connected and never spoke — can then never keep
/// `/health`, pushes and pulls waiting in the kernel's backlog. Connections that sent a request (a
/// long-poll, a live stream, a keep-alive client between requests) are never evicted.
package final class IdleConnections: Sendable {
    private let state = Mutex<(next: UInt64, waiting: [ObjectIdentifier: (order: UInt64, channel: any Channel)])>(
        (0, [:]))

    package init() {}

    /// `channel` is open and has sent nothing complete yet.
    func opened(_ channel: any Channel) {
        state.withLock { state in
            state.waiting[ObjectIdentifier(channel)] = (state.next, channel)
            state.next += 1
        }
    }

    /// `channel` sent a complete request head, or closed.
    func spoke(_ channel: any Channel) {
        _ = state.withLock { $0.waiting.removeValue(forKey: ObjectIdentifier(channel)) }
    }

    /// Closes the `count` oldest connections that have not spoken; returns how many it closed.
    @discardableResult
    func evictOldest(_ count: Int) -> Int {
        let evicted: [any Channel] = state.withLock { state in
            let oldest = state.waiting.sorted { $0.value.order < $1.value.order }.prefix(max(0, count))
            for (key, _) in oldest { state.waiting.removeValue(forKey: key) }
            return oldest.map(\.value.channel)
        }
        for channel in evicted { channel.close(promise: nil) }
        return evicted.count
    }

    var count: Int { state.withLock { $0.waiting.count } }
}
