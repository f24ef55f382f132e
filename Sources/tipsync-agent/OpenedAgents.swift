import Foundation
import Synchronization
import TipSyncAgent

/// The agents a command opened, kept until the process ends.
///
/// A command is one short process: when it is done, the store's database is closed (its
/// write-ahead log checkpointed) and the process exits, leaving the replica's memory to the exit.
/// Freeing a replica object by object costs time proportional to what it holds — about 45 ms for
/// 100,000 donations, a tenth of a cold `sync` (docs/benchmark-history.md, cold start).
enum OpenedAgents {
    private static let agents = Mutex<[Agent]>([])

    /// Keeps `agent` until the process ends.
    static func keep(_ agent: Agent) -> Agent {
        agents.withLock { $0.append(agent) }
        return agent
    }

    /// Closes every kept agent's database. A failure to close leaves its log as it is, which the
    /// next open reads as after any crash: nothing is lost.
    static func closeAll() {
        for agent in agents.withLock({ $0 }) { try? agent.close() }
    }
}
