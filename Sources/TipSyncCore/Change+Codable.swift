/// The wire and log form of a change: one flat JSON object with a `kind` discriminator.
/// `protocol.md` ("The change format") documents every field.
extension Change: Codable {
    private enum CodingKeys: String, CodingKey {
        case device, seq, hlc, kind
        case id, value, tip, state, reason, epoch, count, duration, lastDisplayed, event, date, info
    }

    /// The `kind` values a change may carry.
    public enum Kind: String, Sendable, CaseIterable {
        case parameter, eligibility, display, donation, donationsDeleted, datastoreReset
    }

    /// The keys a change of this kind defines (besides `device`, `seq`, `hlc`, `kind`).
    static func fields(of kind: Kind) -> Set<String> {
        switch kind {
        case .parameter: ["id", "value"]
        case .eligibility: ["tip", "state", "reason"]
        case .display: ["tip", "epoch", "count", "duration", "lastDisplayed"]
        case .donation: ["event", "id", "date", "info"]
        case .donationsDeleted: ["event"]
        case .datastoreReset: []
        }
    }

    /// Any key of a JSON object, for reading and writing ``Change/unknownFields``.
    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public var kind: Kind {
        switch operation {
        case .parameter: .parameter
        case .eligibility: .eligibility
        case .display: .display
        case .donation: .donation
        case .donationsDeleted: .donationsDeleted
        case .datastoreReset: .datastoreReset
        }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        device = try container.decode(String.self, forKey: .device)
        seq = try container.decode(Int64.self, forKey: .seq)
        hlc = try container.decode(HLC.self, forKey: .hlc)
        let kindText = try container.decode(String.self, forKey: .kind)
        guard let kind = Kind(rawValue: kindText) else {
            throw DecodingError.dataCorruptedError(
                forKey: .kind, in: container,
                debugDescription: "unknown change kind '\(kindText)'; expected one of "
                    + Kind.allCases.map(\.rawValue).joined(separator: ", "))
        }
        switch kind {
        case .parameter:
            operation = .parameter(
                id: try container.decode(String.self, forKey: .id),
                value: try container.decode(JSONValue.self, forKey: .value))
        case .eligibility:
            let state = try container.decode(String.self, forKey: .state)
            switch state {
            case "eligible":
                operation = .eligibility(tip: try container.decode(String.self, forKey: .tip), state: .eligible)
            case "invalidated":
                let reasonText = try container.decode(String.self, forKey: .reason)
                guard let reason = InvalidationReason(rawValue: reasonText) else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .reason, in: container,
                        debugDescription: "unknown invalidation reason '\(reasonText)'; expected one of "
                            + InvalidationReason.allCases.map(\.rawValue).joined(separator: ", "))
                }
                operation = .eligibility(
                    tip: try container.decode(String.self, forKey: .tip), state: .invalidated(reason))
            default:
                throw DecodingError.dataCorruptedError(
                    forKey: .state, in: container,
                    debugDescription: "unknown eligibility state '\(state)'; expected eligible or invalidated")
            }
        case .display:
            operation = .display(
                tip: try container.decode(String.self, forKey: .tip),
                epoch: try container.decodeIfPresent(Stamp.self, forKey: .epoch),
                count: try container.decode(Int64.self, forKey: .count),
                duration: try container.decode(Double.self, forKey: .duration),
                lastDisplayed: try container.decode(Int64.self, forKey: .lastDisplayed))
        case .donation:
            // `decodeIfPresent` would read `null` as absent.
            let info = container.contains(.info) ? try container.decode(JSONValue.self, forKey: .info) : nil
            operation = .donation(
                event: try container.decode(String.self, forKey: .event),
                id: try container.decode(String.self, forKey: .id),
                date: try container.decode(Int64.self, forKey: .date),
                info: info)  // `"info": null` is a payload (null), kept as sent; absent is no payload
        case .donationsDeleted:
            operation = .donationsDeleted(event: try container.decode(String.self, forKey: .event))
        case .datastoreReset:
            operation = .datastoreReset
        }
        let known = Self.fields(of: kind).union(["device", "seq", "hlc", "kind"])
        let all = try decoder.container(keyedBy: AnyKey.self)
        var unknown: [String: JSONValue] = [:]
        for key in all.allKeys where !known.contains(key.stringValue) {
            unknown[key.stringValue] = try all.decode(JSONValue.self, forKey: key)
        }
        unknownFields = unknown
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(device, forKey: .device)
        try container.encode(seq, forKey: .seq)
        try container.encode(hlc, forKey: .hlc)
        try container.encode(kind.rawValue, forKey: .kind)
        switch operation {
        case .parameter(let id, let value):
            try container.encode(id, forKey: .id)
            try container.encode(value, forKey: .value)
        case .eligibility(let tip, let state):
            try container.encode(tip, forKey: .tip)
            switch state {
            case .eligible:
                try container.encode("eligible", forKey: .state)
            case .invalidated(let reason):
                try container.encode("invalidated", forKey: .state)
                try container.encode(reason, forKey: .reason)
            }
        case .display(let tip, let epoch, let count, let duration, let lastDisplayed):
            try container.encode(tip, forKey: .tip)
            try container.encodeIfPresent(epoch, forKey: .epoch)
            try container.encode(count, forKey: .count)
            try container.encode(duration, forKey: .duration)
            try container.encode(lastDisplayed, forKey: .lastDisplayed)
        case .donation(let event, let id, let date, let info):
            try container.encode(event, forKey: .event)
            try container.encode(id, forKey: .id)
            try container.encode(date, forKey: .date)
            try container.encodeIfPresent(info, forKey: .info)
        case .donationsDeleted(let event):
            try container.encode(event, forKey: .event)
        case .datastoreReset:
            break
        }
        guard !unknownFields.isEmpty else { return }
        var extra = encoder.container(keyedBy: AnyKey.self)
        for (key, value) in unknownFields { try extra.encode(value, forKey: AnyKey(stringValue: key)) }
    }
}
