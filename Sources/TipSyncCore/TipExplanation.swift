import Foundation

/// A tip's status explained in protocol terms (protocol.md §13.9): the deciding step, and what it
/// read — the rule that does not hold with the values it read, the invalidation with its device and
/// time, the display totals and limit, the instant display frequency lets go. The same JSON in every
/// client: `tipsync-agent status TIP --why`, `Tip.explanation`, `explain()` in JavaScript, the console.
public struct TipExplanation: Sendable, Hashable, CustomStringConvertible {
    public var tip: String
    public var reason: StatusReason
    /// The JSON form: `{"tip", "status", "reason", …}` with the members of section 13.9.
    public var json: JSONValue

    public var status: TipStatus { reason.status }

    /// One line for people: `welcome: pending — rules[0] {"==":[{"param":"isLoggedIn"},true]} does
    /// not hold (isLoggedIn = false)`.
    public var description: String {
        let status = reason.status
        let detail: String
        switch reason {
        case .testingOverride: detail = "a testing override"
        case .invalidated(let why):
            let by = json["invalidatedBy"].flatMap { if case .string(let d) = $0 { d } else { nil } } ?? "?"
            detail =
                "invalidated (\(why.rawValue)) by device '\(by)'"
                + (json["invalidatedAt"]?.number.map { " at \(Self.time($0))" } ?? "")
        case .maxDisplayCount(let count, let maximum): detail = "shown \(count) times; maxDisplayCount is \(maximum)"
        case .maxDisplayDuration(let duration, let maximum):
            detail = "shown \(duration) s; maxDisplayDuration is \(maximum) s"
        case .turnedOff(let all): detail = all ? "the catalog turns every tip off" : "the catalog turns this tip off"
        case .targeting(let index), .rule(let index):
            let member = reason.code == "targeting" ? "targeting" : "rules"
            let expression = json["expression"]?.canonicalText ?? ""
            let values = Self.valuesText(json["values"])
            detail =
                "\(member)[\(index)] \(expression) does not hold" + (values.isEmpty ? "" : " (\(values))")
                + (json["error"].map { if case .string(let e) = $0 { "; \(e)" } else { "" } } ?? "")
        case .displayFrequency(let until): detail = "display frequency holds it until \(Self.time(until))"
        case .firstSync: detail = "held until the first sync"
        case .experiment(let id, let arm):
            detail =
                arm == .holdout
                ? "experiment '\(id)' holds this account out"
                : "experiment '\(id)' waits for the device to learn its account (its arm)"
        case .available: detail = "nothing holds it back"
        }
        return "\(tip): \(status) — \(detail)"
    }

    /// Milliseconds since 1970 as an ISO 8601 UTC time, to the second: `2026-11-28T05:49:30Z`.
    static func time(_ milliseconds: Double) -> String {
        Date(timeIntervalSince1970: (milliseconds / 1000).rounded(.down)).formatted(.iso8601)
    }

    static func valuesText(_ values: JSONValue?) -> String {
        guard case .object(let members)? = values else { return "" }
        return members.keys.sorted().map { "\($0) = \(members[$0]!.canonicalText)" }.joined(separator: ", ")
    }
}

extension StatusEvaluator {
    /// Why `tip` has its status now, with what decided it (protocol.md §13.9).
    public func explanation(of tip: TipDefinition) -> TipExplanation {
        let reason = reason(of: tip)
        var members: [String: JSONValue] = [
            "tip": .string(tip.id), "status": .string(reason.status.protocolName), "reason": .string(reason.code),
        ]
        switch reason {
        case .testingOverride, .available, .firstSync:
            break
        case .invalidated:
            if let stamp = state.tips[tip.id]?.eligibility?.stamp {
                members["invalidatedBy"] = .string(stamp.device)
                members["invalidatedAt"] = .int(Int64(stamp.hlc.milliseconds))
            }
        case .maxDisplayCount(let count, let maximum):
            members["count"] = .int(count)
            members["maximum"] = .int(Int64(maximum))
        case .maxDisplayDuration(let duration, let maximum):
            members["duration"] = JSONValue.double(duration).canonicalNumbers
            members["maximum"] = JSONValue.double(maximum).canonicalNumbers
        case .turnedOff(let all):
            members["scope"] = .string(all ? "catalog" : "tip")
        case .targeting(let index), .rule(let index):
            let rule = (reason.code == "targeting" ? tip.targeting ?? [] : tip.rules)[index]
            members["index"] = .int(Int64(index))
            members["expression"] = rule.json
            members["values"] = .object(readValues(of: rule))
            do {
                _ = try RuleEvaluator(context: self).holds(rule)
            } catch {
                members["error"] = .string("\(error)")
            }
        case .displayFrequency(let until):
            members["until"] = JSONValue.double(until).canonicalNumbers
        case .experiment(let id, let arm):
            members["experiment"] = .string(id)
            members["arm"] = arm.map { .string($0.rawValue) } ?? .null
        }
        return TipExplanation(tip: tip.id, reason: reason, json: .object(members))
    }

    /// What a rule reads, by name: `param:ID` → the value, `donations:ID` → how many donations rules
    /// see, `context:NAME` → the device's value, `bucket:KEY` → the account's bucket (or `null`).
    func readValues(of rule: RuleExpression) -> [String: JSONValue] {
        var values: [String: JSONValue] = [:]
        rule.visitReads { read in
            switch read {
            case .parameter(let id): values["param:\(id)"] = parameterValue(id)
            case .donations(let id): values["donations:\(id)"] = .int(Int64(donations(id).count))
            case .context(let name): values["context:\(name)"] = deviceContext.value(name)
            case .bucket(let key):
                values["bucket:\(key)"] =
                    deviceContext.account.map { .int(Int64(RolloutBucket.bucket(account: $0, key: key))) } ?? .null
            default: break
            }
        }
        return values
    }
}
