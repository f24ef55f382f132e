import Foundation
public import Logging
import ServiceLifecycle
import TipSync
import UnixSignals

/// `tipsync-agent run`: live sync, the local API and a watch on the store (for CLI calls writing
/// to it) as services, until SIGTERM or SIGINT; then each stops cleanly and the socket is removed.
public struct AgentDaemon: Sendable {
    public let agent: Agent
    public let logger: Logger
    /// How often the store is checked for writes by other processes and catalog changes. CLI calls
    /// that write tell a running daemon at once (the local API's `reload`), so this is only the
    /// backstop: one look every two seconds is what an idle agent costs for it.
    public var storePollInterval: Duration = .seconds(2)

    public init(agent: Agent, logger: Logger) {
        self.agent = agent
        self.logger = logger
    }

    public func run() async throws {
        let logger = logger
        let client = agent.syncClient(
            onServerCatalog: { event in
                switch event {
                case .applied(let tag, let catalog, _):
                    logger.notice(
                        "applied the server's catalog",
                        metadata: ["version": "\(tag)", "tips": "\(catalog.tips.count)"])
                case .refused(let tag, let reason):
                    logger.error(
                        "refused the server's catalog: it does not validate; keeping the one in use",
                        metadata: ["version": "\(tag)", "reason": "\(reason)"])
                }
            },
            onStatusChange: { before, after in Self.log(before, after, logger) })
        let handler = LocalAPIHandler(
            agent: agent, sync: { try await client.syncOnce() }, syncStatus: { await client.status })
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [
                    .init(service: LocalAPIServer(handler: handler, path: agent.store.socketPath, logger: logger)),
                    .init(service: LiveSyncService(client: client, logger: logger)),
                    .init(service: StoreWatchService(agent: agent, interval: storePollInterval, logger: logger)),
                ],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger))
        logger.info(
            "agent running",
            metadata: ["device": "\(agent.configuration.device)", "server": "\(agent.configuration.server)"])
        try await group.run()
    }
}

extension AgentDaemon {
    /// One line each time the sync state changes (protocol.md §17.4): `warning` when the server
    /// refuses (with its code and message, and when the agent tries again) or sync stops, `info`
    /// when it cannot reach the server and when it syncs again — an outage is two lines, however
    /// long it lasts; and one when the first sync completes.
    static func log(_ before: SyncStatus, _ after: SyncStatus, _ logger: Logger) {
        let changedCode = before.lastError?.code != after.lastError?.code
        if before.state != after.state || (after.state == .refused && changedCode) {
            var metadata: Logger.Metadata = ["state": "\(after.state.rawValue)", "waiting": "\(after.pendingChanges)"]
            if let error = after.lastError {
                metadata["code"] = "\(error.code)"
                metadata["error"] = "\(error)"
            }
            if let next = after.nextAttemptAt { metadata["retryAt"] = "\(next.formatted(.iso8601))" }
            switch after.state {
            case .refused:
                logger.warning("the server refuses to sync; retrying with backoff", metadata: metadata)
            case .stopped:
                logger.warning("sync stopped", metadata: metadata)
            case .offline:
                logger.info(
                    "cannot sync; changes wait in the store and are pushed when it works again", metadata: metadata)
            case .connected where before.state != .connecting:
                logger.info("syncing again", metadata: metadata)
            case .connected, .connecting:
                break
            }
        }
        if !before.hasSynced, after.hasSynced { logger.info("first sync complete") }
    }
}

/// Keeps the replica in sync with the server (a live stream that carries other devices' changes,
/// a push after each change, backoff while the server is unreachable or refuses) until shutdown.
/// Sync ends only when the server says the account was erased (protocol.md §17.3); the local API
/// goes on serving the replica then.
struct LiveSyncService: Service {
    let client: SyncClient
    let logger: Logger

    func run() async throws {
        try await untilGracefulShutdown {
            do {
                try await client.run()
            } catch let error where !(error is CancellationError) {
                logger.error(
                    "sync stopped for good: the server will never accept this device again",
                    metadata: ["error": "\(error)"])
                try await gracefulShutdown()
            }
        }
    }
}

/// Notices writes other processes make to the store (a CLI `invalidate` while the daemon runs) and
/// catalog replacements, so watchers see them and the sync pushes them at once.
struct StoreWatchService: Service {
    let agent: Agent
    let interval: Duration
    let logger: Logger

    func run() async throws {
        try await untilGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try agent.replica.reloadIfChangedElsewhere()
                    try agent.reloadCatalogIfChanged()
                } catch {
                    logger.warning("cannot reload the store", metadata: ["error": "\(error)"])
                }
                try await Task.sleep(for: interval)
            }
        }
    }
}

/// Runs `body` until it ends or graceful shutdown begins (then it is cancelled); the cancellation
/// that shutdown causes is a clean stop, not an error.
func untilGracefulShutdown(_ body: @escaping @Sendable () async throws -> Void) async throws {
    do {
        try await cancelWhenGracefulShutdown { try await body() }
    } catch is CancellationError {
    }
}
