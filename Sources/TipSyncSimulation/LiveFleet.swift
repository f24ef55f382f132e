public import Foundation
import Synchronization
public import TipSync
public import TipSyncCore

/// Devices running the real sync loop (``SyncClient/run()``) on one account of an in-process
/// server, through a ``LiveNetwork``: what liveness tests and the simulator's live mode drive.
public final class LiveFleet: Sendable {
    /// One device: its replica, its client and the task running the client's loop.
    public struct Device: Sendable {
        public let id: String
        public let replica: TipsReplica
        public let client: SyncClient
    }

    public let server: SimulatedServer
    public let network: LiveNetwork
    public let directory: URL
    public let devices: [Device]
    let running = Mutex<[String: Task<Void, Never>]>([:])
    /// How each device's loop ended, when it did (an error a loop must never end with).
    let endings = Endings()

    final class Endings: Sendable {
        let byDevice = Mutex<[String: String]>([:])
        func set(_ id: String, _ ending: String) { byDevice.withLock { $0[id] = ending } }
    }

    /// A server and `devices` replicas (in a new directory under `scratch`), each with the
    /// `catalog` loaded and a client whose requests, backoff and `Retry-After` waits go through
    /// the network; `configure` adjusts each device's sync configuration.
    public init(
        devices ids: [String], catalog: Catalog? = nil,
        scratch: URL = FileManager.default.temporaryDirectory,
        clock: @escaping @Sendable (String) -> TipsClock = { _ in .system },
        serverNow: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) },
        configure: (String, inout SyncConfiguration) -> Void = { _, _ in }
    ) async throws {
        directory = scratch.appendingPathComponent("tipsync-live-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        server = try await SimulatedServer(directory: directory, devices: ids, now: serverNow)
        network = LiveNetwork(server: server)
        var devices: [Device] = []
        for id in ids {
            let replica = try TipsReplica(
                directory: directory.appendingPathComponent(id), deviceID: id, clock: clock(id), environment: [:])
            if let catalog { try replica.load(catalog: catalog) }
            var configuration = SyncConfiguration(
                server: URL(string: "http://live")!, token: await server.tokens[id] ?? "")
            configuration.compressPushes = false  // the network reads push bodies
            configure(id, &configuration)
            let client = SyncClient(
                replica: replica, configuration: configuration, transport: network.transport(for: id),
                sleep: network.sleep(for: id), jitter: { 1 })
            devices.append(Device(id: id, replica: replica, client: client))
        }
        self.devices = devices
    }

    deinit {
        for task in running.withLock({ Array($0.values) }) { task.cancel() }
        try? FileManager.default.removeItem(at: directory)
    }

    public subscript(id: String) -> Device {
        devices.first { $0.id == id }!
    }

    /// Starts `id`'s sync loop (as `Tips.configure(.sync(…))` does).
    public func start(_ id: String) {
        let client = self[id].client
        endings.byDevice.withLock { _ = $0.removeValue(forKey: id) }
        let task = Task { [endings] in
            do {
                try await client.run()
                endings.set(id, "returned")
            } catch is CancellationError {
                endings.set(id, "cancelled")
            } catch {
                endings.set(id, "\(error)")
            }
        }
        running.withLock { $0[id] = task }
    }

    /// Starts every device's loop.
    public func startAll() {
        for device in devices { start(device.id) }
    }

    /// Stops `id`'s loop (the app quits) and waits until it has.
    public func stop(_ id: String) async {
        guard let task = running.withLock({ $0.removeValue(forKey: id) }) else { return }
        task.cancel()
        await task.value
    }

    public func stopAll() async {
        for device in devices { await stop(device.id) }
    }

    /// How `id`'s loop ended, if it did: a running app's loop never ends by itself.
    public func ending(of id: String) -> String? {
        endings.byDevice.withLock { $0[id] }
    }

    /// Whether the server holds `id`'s changes through `seq`.
    public func serverHolds(_ id: String, through seq: Int64) async -> Bool {
        (try? await server.highestSeq(of: id)) ?? 0 >= seq
    }

    /// Returns once the server holds `id`'s changes through `seq`.
    public func waitUntilServerHolds(_ id: String, through seq: Int64) async {
        await network.waitUntil { await self.serverHolds(id, through: seq) }
    }

    /// Returns once every device in `ids` holds the same data as `reference`.
    public func waitUntilEqual(_ ids: [String], to reference: String) async {
        let target = self[reference].replica
        let others = ids.map { self[$0].replica }
        await network.waitUntil { others.allSatisfy { $0.state == target.state } }
    }
}
