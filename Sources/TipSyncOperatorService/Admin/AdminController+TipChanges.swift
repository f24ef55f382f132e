import Foundation
import Hummingbird
import Logging
import TipSyncCore
import TipSyncDeviceService
import TipSyncServerBasics
import TipSyncStorage

/// Support's most common request (issue 73, item 5): reset or dismiss one tip for one account. The
/// server writes the change to the account's log as the device ``adminDevice``, so it reaches the
/// account's devices like any other change and merges by the same rules; the log entry (device,
/// stamp) and a `notice` log line naming the admin key are its audit trail.
extension AdminController {
    /// The device the server writes support's changes as.
    static let adminDevice = "tipsync-admin"

    /// What support can do to one tip of one account.
    enum TipAction: String, CaseIterable, Sendable {
        /// The tip becomes eligible again (as `resetEligibility`): it may show again.
        case reset
        /// The tip is invalidated with `tipClosed`, as if the person closed it.
        case dismiss

        var state: EligibilityState {
            switch self {
            case .reset: .eligible
            case .dismiss: .invalidated(.tipClosed)
            }
        }
    }

    /// `POST /admin/v1/accounts/{account}/tips/{tip}/reset` and `…/dismiss`.
    @Sendable func changeTip(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let name = try NameRules.pathSegment(context, "account")
        let tip = try NameRules.pathSegment(context, "tip")
        guard let text = context.parameters.get("action"), let action = TipAction(rawValue: text) else {
            throw SyncError.notFound("no such action; POST …/tips/{tip}/reset or …/tips/{tip}/dismiss")
        }
        let change = try await write(action, tip: tip, account: name, by: context.adminKey ?? "admin", context.logger)
        return try SyncController.json(
            TipChanged(
                account: name, tip: tip, action: action.rawValue, device: change.device, seq: change.seq,
                hlc: change.hlc.description))
    }

    /// Writes `action` on `tip` to the account's log as ``adminDevice``, stamped after every change
    /// the log holds for the tip (a device whose clock runs ahead cannot outvote support), and tells
    /// the account's streams. Returns the change written.
    func write(_ action: TipAction, tip: String, account name: String, by admin: String, _ logger: Logger)
        async throws -> Change
    {
        guard let id = try await store.accountID(named: name) else { throw Self.noAccount(name) }
        var state = ReplicaState()
        try await store.forEachChange(account: id) { state.apply($0) }
        var clock = HybridLogicalClock()
        let serverTime = now()
        let physical = UInt64(max(0, serverTime))
        if let latest = state.tips[tip]?.eligibility?.stamp.hlc {
            clock.observe(latest, physicalMilliseconds: physical)
        }
        if let reset = state.tips[tip]?.resetStamp?.hlc { clock.observe(reset, physicalMilliseconds: physical) }
        // The admin device is one of the account's devices (created on first use), so its seq counts.
        guard
            case .identity(let identity) = try await store.signIn(
                accountName: name, device: Self.adminDevice, issuedAt: nil, at: serverTime)
        else { throw Self.noAccount(name) }
        let seq = (try await store.highestSeq(account: id, device: Self.adminDevice) ?? 0) + 1
        let change = Change(
            device: Self.adminDevice, seq: seq, hlc: clock.tick(physicalMilliseconds: physical),
            operation: .eligibility(tip: tip, state: action.state))
        if let violation = change.violation {
            throw SyncError.invalidParameter("tip: \(violation.message)")
        }
        let outcome = try await store.push([change], from: identity)
        notifier.notify(account: id) {
            LivePages.primed(outcome.appended, generation: outcome.generation, serverTime: serverTime)
        }
        logger.notice(
            "support changed a tip",
            metadata: [
                "admin": .string(admin), "account": .string(name), "tip": .string(tip),
                "action": .string(action.rawValue), "seq": .stringConvertible(seq),
            ])
        return change
    }
}

struct TipChanged: Codable, Sendable {
    var account: String
    var tip: String
    var action: String
    /// The device the change was written as (``AdminController/adminDevice``) and its place.
    var device: String
    var seq: Int64
    var hlc: String
}
