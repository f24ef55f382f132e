import Foundation
import TipSyncCore

/// What goes out: the outbox pushed in batches, after the first contact's checks (a log of this
/// device name the server already holds, the account's name).
extension SyncClient {
    /// Before a replica's first push or pull: when the server already holds a log of this device name (the
    /// app was reinstalled, the replica file deleted), the replica's changes would reuse its sequence
    /// numbers and be dropped as duplicates. They are numbered after it instead, and the device's old
    /// changes come back with the pulls (protocol.md §7, "A device whose storage was lost"). A pull
    /// too: its `highestSeq` would otherwise count them as acknowledged.
    func continueDeviceLogOnFirstContact() async throws {
        let progress = try replica.syncProgress
        guard !contacted, progress.serverGeneration == nil, progress.acknowledgedHighSeq == 0,
            progress.pullCursor == nil, progress.uncertainPush == nil
        else { return }
        let name = replica.deviceID.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? replica.deviceID
        let (response, _) = try await send("GET", "/v1/devices/\(name)")
        switch response.status {
        case 200:
            try replica.continueDeviceLog(after: try decode(DeviceResponse.self, response.body).highestSeq)
        case 404:
            break  // the server has not seen this device
        default:
            throw Self.rejection(response)
        }
        contacted = true
    }

    /// Asks the server whom the credential names, once, when the replica does not know its account:
    /// rollout buckets hash the account's name (protocol.md §13.8). A server without the route
    /// (`404`, one older than revision 2.4) leaves it unknown: bucketed tips stay pending.
    func learnAccount() async throws {
        guard replica.account == nil, !accountAsked else { return }
        let (response, _) = try await send("GET", "/v1/account")
        switch response.status {
        case 200: try replica.setAccount(try decode(AccountResponse.self, response.body).account)
        case 404: break
        default: throw Self.rejection(response)
        }
        accountAsked = true
    }

    /// How long a push may go unanswered before it counts as a failure: 30 s, plus 1 s per 16 KiB of
    /// its JSON (a push of the protocol's largest body, 1 MiB: 94 s). A server serves a large push last
    /// when it is busy (`tipsync-server` parses bodies above 64 KiB on a lowest-priority thread); a
    /// client that gave up at 30 s would send the same megabyte again, and the server parse it twice.
    static func pushBound(bodyBytes: Int) -> TimeInterval {
        30 + TimeInterval(bodyBytes / 16_384)
    }

    func pushAll() async throws {
        var restamped = false
        while true {
            let outbox = try replica.outbox(
                limit: pushLimit ?? configuration.pushBatchSize, bytes: PushRequest.maxClientChangesBytes)
            guard !outbox.isEmpty else { return }
            // At most ``PushRequest/maxClientBodyBytes`` a push: a large outbox goes in pushes that
            // the server's body limit and budget admit (protocol.md §7).
            let (count, bytes) = PushRequest.body(fitting: outbox)
            let batch = Array(outbox.prefix(count))
            let body = Data(bytes)
            let response: SyncHTTPResponse
            let sent: Date
            do {
                (response, sent) = try await send(
                    "POST", "/v1/push", body: body, compressible: true, timeout: Self.pushBound(bodyBytes: body.count))
            } catch let error as SyncClientError where error.isTransient {
                // No answer: the server may have stored the batch, and other devices pulled it.
                try replica.updateSyncProgress { $0.recordUncertainPush(through: batch[batch.count - 1].seq) }
                throw error
            }
            switch response.status {
            case 200:
                let result = try decode(PushResponse.self, response.body)
                let offset = clockCorrection(serverTime: result.serverTime, sent: sent)
                try replica.updateSyncProgress { progress in
                    if let offset { progress.clockOffset = offset }
                    progress.setPushed(through: result.highestSeq)
                    progress.noteServer(holds: result.highestSeq, generation: result.generation)
                }
                publishStatus(connected: true)
            case 409 where Self.errorCode(response.body)?.code == ErrorCode.sequenceGap.rawValue:
                // The server has less (or more) of our log than we thought: resume from what it expects.
                guard let expected = Self.errorCode(response.body)?.expectedSeq else { throw Self.rejection(response) }
                try replica.updateSyncProgress { $0.setPushed(through: expected > 0 ? expected - 1 : 0) }
            case 413 where batch.count > 1:
                // Over a limit this server sets lower than the protocol's defaults: smaller pushes.
                pushLimit = max(1, batch.count / 2)
            case 422 where Self.errorCode(response.body)?.code == ErrorCode.clockSkew.rawValue && !restamped:
                // Our clock is ahead of the server's: correct it, re-stamp what is unsent, push again.
                let detail = Self.errorCode(response.body)
                let offset = detail?.serverTime.flatMap { clockCorrection(serverTime: $0, sent: sent, force: true) }
                // What the server already holds keeps its stamps (a push whose answer was lost).
                let held = detail?.highestSeq ?? 0
                let kept = try replica.updateSyncProgress { progress in
                    if let offset { progress.clockOffset = offset }
                    if held > progress.pushedSeq { progress.setPushed(through: held) }
                    return progress.keptThroughUncertainPush(held: held, serverGeneration: detail?.generation)
                }
                try replica.restampUnacknowledgedChanges(keepingThrough: kept)
                restamped = true
            case 422 where Self.errorCode(response.body)?.code == ErrorCode.invalidChange.rawValue:
                // One change the server will never take: set it aside and push the rest (§17.2).
                let detail = Self.errorCode(response.body)
                let message = detail?.message ?? ""
                guard let detail, let index = RefusedChange.index(in: detail), batch.indices.contains(index),
                    let change = try replica.setAsideUnsentChange(seq: batch[index].seq)
                else { throw Self.rejection(response) }
                let refused = RefusedChange(change: change, reason: message)
                setAside.append(refused)
                configuration.onRefusedChange?(refused)
                publishStatus(error: .some(Self.rejection(response)))
            default:
                if response.status >= 500 {
                    // The server failed; it may have done so after committing.
                    try replica.updateSyncProgress { $0.recordUncertainPush(through: batch[batch.count - 1].seq) }
                }
                throw Self.rejection(response)
            }
        }
    }
}
