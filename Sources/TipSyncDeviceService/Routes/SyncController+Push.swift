import CoreMetrics
import Hummingbird
import NIOCore
import TipSyncCore
import TipSyncServerBasics
import TipSyncStorage

/// `POST /v1/push`: the route and its steps — what a body's changes are, what they cost, and the
/// answer once they are stored. Each rule of a push is here, once.
extension SyncController {
    @Sendable func push(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let identity = try context.requireIdentity()
        try Self.requireJSON(request)
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: limits.maxBodyBytes)
        } catch {
            throw SyncError.bodyTooLarge(limits.maxBodyBytes)
        }
        let serverTime = now()
        let pushed: PushedChanges
        do {
            pushed = try await pushedChanges(
                buffer, contentEncoding: request.headers[.contentEncoding], identity: identity, serverTime: serverTime)
        } catch let ahead as ClockAhead {
            // The device must not re-stamp what the server already holds (a push whose answer it lost).
            let highest = try await store.highestSeq(account: identity.accountID, device: identity.device) ?? 0
            throw SyncError.clockSkew(
                hlc: ahead.hlc, serverTime: serverTime, bound: limits.maxClockSkew.wholeMilliseconds,
                highestSeq: highest, generation: try await store.cursorGeneration())
        }
        try charge(pushed.changes.count, to: identity, now: serverTime)
        let outcome = try await store.push(pushed, from: identity, confirming: context.unconfirmedToken)
        var generation = outcome.generation
        if generation == nil { generation = try await store.cursorGeneration() }
        announce(outcome, identity: identity, serverTime: serverTime, generation: generation)
        metrics.pushes.increment()
        return Self.json(text: pushAnswer(outcome, serverTime: serverTime, generation: generation))
    }

    /// A change stamped further ahead of the server's clock than ``ServerConfiguration/maxClockSkew``:
    /// refused with `409 clock_skew`, whose answer needs the device's highest stored seq.
    struct ClockAhead: Error {
        let hlc: HLC
    }

    /// The changes of a push's body, checked against every rule a push's changes must follow
    /// (protocol.md, sections 1 and 3), each encoded as it is stored. A body that decodes to more than
    /// ``CostlyWork/threshold`` bytes is decoded, parsed and checked in the ``CostlyWork`` lane, behind
    /// every other request (issue 59); the steps are the same wherever they run.
    /// - Throws: the ``SyncError`` that refuses the push whole, or ``ClockAhead``.
    func pushedChanges(_ body: ByteBuffer, contentEncoding: String?, identity: DeviceIdentity, serverTime: Int64)
        async throws -> PushedChanges
    {
        // The work of a body is paid for in its decoded bytes: a device in debt is refused before
        // its body is inflated or parsed (issue 59: one device re-sending a 4 KB body that inflates
        // to a 4 MB push held every other device's requests back).
        if let wait = bodyByteLimiter.wait(identity, now: serverTime) { throw bodyBudgetSpent(wait) }
        // Inflating up to the threshold costs little; a body that goes beyond it is the costly kind.
        var small: ByteBuffer?
        if body.readableBytes <= CostlyWork.threshold {
            do {
                small = try ContentCoding.decode(body, encoding: contentEncoding, limit: CostlyWork.threshold)
            } catch let error as SyncError where error.code == .bodyTooLarge {
                small = nil  // inflates beyond the threshold: the lane inflates it again, to the body limit
            }
        }
        if let small {
            return try changes(in: small, identity: identity, serverTime: serverTime)
        }
        return try await costlyWork.run { [self] in
            let decoded: ByteBuffer
            do {
                decoded = try ContentCoding.decode(body, encoding: contentEncoding, limit: limits.maxBodyBytes)
            } catch let error as SyncError where error.code == .bodyTooLarge {
                // A body that inflates past the limit (a gzip bomb) cost its inflating up to the
                // limit: charged to the body budget like any decoded bytes, so one device cannot send
                // them 20–33 times a second beside others (issue 74, item 2).
                _ = bodyByteLimiter.spend(identity, cost: Double(limits.maxBodyBytes), now: serverTime)
                throw error
            }
            return try changes(in: decoded, identity: identity, serverTime: serverTime)
        }
    }

    /// The changes of a decoded push body, checked and encoded as they are stored; the decoded bytes
    /// are spent from the device's body budget first, whether or not the push is accepted. A body
    /// read while the device was not in debt is never refused for the budget — its work is done, and
    /// refusing it would make the device send the same bytes again, and be refused again, forever
    /// (issue 72) — the debt it leaves (at most one burst) refuses the device's *next* body, with a
    /// `Retry-After` that says when the budget is out of debt.
    private func changes(in buffer: ByteBuffer, identity: DeviceIdentity, serverTime: Int64) throws -> PushedChanges {
        _ = bodyByteLimiter.spend(identity, cost: Double(buffer.readableBytes), now: serverTime)
        let pushRequest: PushRequest
        do {
            pushRequest = try JSONCoding.decode(PushRequest.self, from: buffer.readableBytesView)
        } catch let error as DecodingError {
            throw Self.describe(error)
        } catch let error as JSONParser.Error where error.isDuplicateMemberName {
            // JSON, but not one every implementation reads alike (protocol.md, section 1): refused whole.
            throw SyncError.invalidChange("\(error.path.isEmpty ? "body" : error.path): \(error.message)")
        } catch let error as JSONParser.Error {
            throw SyncError.malformedJSON("the body is not valid JSON: \(error)")
        }
        let changes = pushRequest.changes
        guard changes.count <= limits.maxBatch else {
            throw SyncError.batchTooLarge(changes.count, limit: limits.maxBatch)
        }
        let bound = serverTime + limits.maxClockSkew.wholeMilliseconds
        for (index, change) in changes.enumerated() {
            // Field rules beyond JSON types (protocol.md, section 3): refused, never altered.
            if let violation = change.violation {
                throw SyncError.invalidChange("changes[\(index)].\(violation.field): \(violation.message)")
            }
            // Names compare as sequences of Unicode scalars, never normalized (protocol.md, section 1).
            guard change.device.unicodeScalars.elementsEqual(identity.device.unicodeScalars) else {
                throw SyncError.deviceMismatch(
                    "this token belongs to device '\(identity.device)' but a change names device '\(change.device)'")
            }
            guard Int64(change.hlc.milliseconds) <= bound else { throw ClockAhead(hlc: change.hlc) }
            // A display time from the future would hold back every never-shown tip on every device
            // (display frequency) until then: bounded like a stamp (protocol.md, section 3).
            if case .display(_, _, _, _, let lastDisplayed) = change.operation, lastDisplayed > bound {
                throw SyncError.invalidChange(
                    "changes[\(index)].lastDisplayed: \(lastDisplayed) is "
                        + "\(SyncError.seconds(lastDisplayed - serverTime)) s ahead of the server's clock (limit "
                        + "\(SyncError.seconds(limits.maxClockSkew.wholeMilliseconds)) s); a display time is not later "
                        + "than the change's stamp")
            }
        }
        // No client-supplied number may trap: Int64.max is a valid integer, so it is checked before adding 1.
        for index in changes.indices.dropFirst()
        where changes[index - 1].seq == .max || changes[index].seq != changes[index - 1].seq + 1 {
            var numbering = SyncError.invalidChange(
                "changes[\(index)].seq: a push must carry consecutive sequence numbers in ascending order "
                    + "(changes[\(index - 1)].seq is \(changes[index - 1].seq), this is \(changes[index].seq))")
            numbering.change = nil  // the batch's numbering: no one change to set aside
            throw numbering
        }
        // A change is at most 64 KiB of canonical text (protocol.md, section 3): one device's 4 MB
        // change held the one writer while every other device's push waited (issue 59).
        let pushed = PushedChanges(changes)
        for (index, text) in pushed.bodies.enumerated() {
            if let violation = Change.sizeViolation(textBytes: text.utf8.count) {
                throw SyncError.invalidChange("changes[\(index)]: \(violation.message)")
            }
        }
        return pushed
    }

    /// Spends `count` changes of the device's change budget (``ServerConfiguration/changeRate``).
    /// - Throws: `429 rate_limited` when it cannot pay them yet (nothing is spent then).
    func charge(_ count: Int, to identity: DeviceIdentity, now: Int64) throws {
        if let wait = changeLimiter.take(identity, cost: Double(count), now: now) {
            metrics.rateLimited.increment()
            throw SyncError.overBudget("pushes", changeLimiter.rate.perSecond, "changes", wait: wait)
        }
    }

    /// `429 rate_limited` for a device whose push bodies used up their budget.
    func bodyBudgetSpent(_ wait: Int) -> SyncError {
        metrics.rateLimited.increment()
        return SyncError.overBudget("pushes", bodyByteLimiter.rate.perSecond, "decoded body bytes", wait: wait)
    }

    /// What follows a stored push: the live streams' news (the push's own entries are the page for
    /// streams that were at the end of the log), compaction's count, the metrics.
    func announce(_ outcome: PushOutcome, identity: DeviceIdentity, serverTime: Int64, generation: String?) {
        metrics.changesAccepted.increment(by: outcome.accepted)
        metrics.duplicatesIgnored.increment(by: outcome.duplicates)
        guard outcome.accepted > 0 else { return }
        notifier.notify(account: identity.accountID) {
            LivePages.primed(outcome.appended, generation: generation, serverTime: serverTime)
        }
        compactor?.pushed(account: identity.accountID, entriesSinceCompaction: outcome.entriesSinceCompaction)
    }

    /// The answer to a stored push, as JSON text.
    func pushAnswer(_ outcome: PushOutcome, serverTime: Int64, generation: String?) -> String {
        PushResponse(
            accepted: outcome.accepted, duplicates: outcome.duplicates, highestSeq: outcome.highestSeq,
            serverTime: serverTime, generation: generation
        ).jsonText
    }
}
