public import Foundation
import TipSync
import TipSyncCore

/// The files of one device's agent, all in one directory (owner-only):
///
/// - `agent.json` — ``AgentConfiguration`` (server, token, device);
/// - `catalog.json` — the catalog last loaded with `tipsync-agent catalog load`;
/// - `replica/` — the SQLite replica (`TipsReplica`), shared safely by the daemon and CLI calls;
/// - `agent.sock` — the local API socket while `tipsync-agent run` is up.
public struct AgentStore: Sendable, Hashable {
    public let directory: URL

    public init(directory: URL) {
        self.directory = directory
    }

    /// `--store` ↔ `TIPSYNC_STORE`; else `$XDG_DATA_HOME/tipsync`; else `~/.local/share/tipsync`.
    public static func defaultDirectory(environment: [String: String]) -> URL {
        if let path = environment["TIPSYNC_STORE"], !path.isEmpty { return URL(fileURLWithPath: path) }
        if let data = environment["XDG_DATA_HOME"], !data.isEmpty {
            return URL(fileURLWithPath: data).appendingPathComponent("tipsync")
        }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return URL(fileURLWithPath: home).appendingPathComponent(".local/share/tipsync")
    }

    public var configurationFile: URL { directory.appendingPathComponent("agent.json") }
    public var catalogFile: URL { directory.appendingPathComponent("catalog.json") }
    public var replicaDirectory: URL { directory.appendingPathComponent("replica") }
    public var socketPath: String { directory.appendingPathComponent("agent.sock").path }

    /// Creates the store (or re-points an existing one at a new server or token). The device name
    /// of an existing replica cannot change: its change log is already stamped with it.
    public func initialize(_ configuration: AgentConfiguration) throws {
        guard !configuration.device.isEmpty, configuration.device.count <= 200 else {
            throw AgentError.badRequest("the device name must be 1 to 200 characters")
        }
        guard let scheme = configuration.server.scheme, ["http", "https"].contains(scheme),
            configuration.server.host != nil
        else {
            throw AgentError.badRequest("the server must be an http:// or https:// URL, got '\(configuration.server)'")
        }
        if let existing = try? readConfiguration(), existing.device != configuration.device {
            throw AgentError(
                .deviceMismatch,
                message:
                    "the store at \(directory.path) belongs to device '\(existing.device)', not '\(configuration.device)'; use another --store"
            )
        }
        let files = FileManager.default
        do {
            try files.createDirectory(
                at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            try files.setAttributes([.posixPermissions: 0o700], ofItemAtPath: directory.path)
        } catch {
            throw AgentError(
                .writeFailed,
                message:
                    "cannot create the store at \(directory.path): \(FileProblem.words(error)); give --store (or TIPSYNC_STORE) a directory you can write"
            )
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try writeAtomically(try encoder.encode(configuration), to: configurationFile, permissions: 0o600)
        // Creates the replica with this device id. The store syncs from now on: its tips are held
        // until the first pull has been merged, or the bounded wait has passed (protocol.md §17.1) —
        // `run` and `sync` start the wait anew — so `status` right after `init` never calls
        // `available` a tip another device has dismissed.
        do {
            let replica = try TipsReplica(
                directory: replicaDirectory, deviceID: configuration.device, environment: [:])
            try replica.holdForFirstSync(seconds: configuration.effectiveFirstSyncTimeout)
        } catch {
            throw AgentError(
                .writeFailed,
                message: "cannot create the replica in \(replicaDirectory.path): \(FileProblem.words(error))")
        }
    }

    /// The recorded configuration; a clear error when the store was never initialized.
    public func readConfiguration() throws -> AgentConfiguration {
        guard let data = FileManager.default.contents(atPath: configurationFile.path) else {
            throw AgentError.noStore(directory.path)
        }
        do {
            return try JSONDecoder().decode(AgentConfiguration.self, from: data)
        } catch {
            throw AgentError(
                .badStore,
                message:
                    "\(configurationFile.path) is damaged (\(FileProblem.words(error))); run `tipsync-agent init` again for this store"
            )
        }
    }

    /// The stored catalog, or an empty one.
    func readCatalog() throws -> (Catalog, modified: Date?) {
        let attributes = try? FileManager.default.attributesOfItem(atPath: catalogFile.path)
        guard let data = FileManager.default.contents(atPath: catalogFile.path) else {
            return (Catalog(), nil)
        }
        return (try Self.decodeCatalog(data, name: catalogFile.path), attributes?[.modificationDate] as? Date)
    }

    /// Decodes and validates a catalog file.
    static func decodeCatalog(_ data: Data, name: String) throws -> Catalog {
        do {
            return try Catalog(validating: data)
        } catch {
            throw AgentError(.badCatalog, message: "\(name) is not a valid catalog: \(error)")
        }
    }

    /// Replaces the stored catalog (write to a temporary file, then rename: never half-written).
    func writeCatalog(_ data: Data) throws {
        try writeAtomically(data, to: catalogFile, permissions: 0o600)
    }

    func writeAtomically(_ data: Data, to url: URL, permissions: Int) throws {
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).tmp")
        try Self.write(data, to: temporary.path, permissions: permissions)
        guard rename(temporary.path, url.path) == 0 else {
            throw AgentError(.writeFailed, message: "cannot replace \(url.path): \(FileProblem.words(errno: errno))")
        }
    }

    /// Writes `data` to a file created with `permissions` (from the first byte: a token is never
    /// readable by others, not even for a moment).
    public static func write(_ data: Data, to path: String, permissions: Int) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode_t(permissions))
        guard descriptor >= 0 else {
            throw AgentError(.writeFailed, message: "cannot write \(path): \(FileProblem.words(errno: errno))")
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        do {
            try handle.write(contentsOf: data)
            try handle.close()
        } catch {
            throw AgentError(.writeFailed, message: "cannot write \(path): \(FileProblem.words(error))")
        }
    }
}
