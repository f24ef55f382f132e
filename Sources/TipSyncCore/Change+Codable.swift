/// The wire and log form of a change: one flat JSON object with a `kind` discriminator.
/// `protocol.md` ("The change format") documents every field.
extension Change: Codable {
    /// The member names a change may have (``unknownFields`` holds any other).
    enum CodingKeys: String, CodingKey, CaseIterable {
        case device, seq, hlc, kind
        case id, value, tip, state, reason, epoch, count, duration, lastDisplayed, event, date, info
    }

    /// The `kind` values a change may carry.
    public enum Kind: String, Sendable, CaseIterable {
        case parameter, eligibility, display, donation, donationsDeleted, datastoreReset
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

    /// Decodes straight from the parsed JSON object when the decoder is ``JSONValueDecoder`` (every
    /// hot path: push bodies, pull pages, stored logs), without a keyed container per field; from any
    /// other decoder, through its JSON value. Errors are the same `DecodingError`s with coding paths.
    public init(from decoder: any Decoder) throws {
        let value = try (decoder as? ValueDecoder)?.value ?? decoder.singleValueContainer().decode(JSONValue.self)
        try self.init(json: value, codingPath: decoder.codingPath)
    }

    /// A change from its JSON object; `codingPath` locates it in the document, for errors.
    init(json: JSONValue, codingPath: [any CodingKey]) throws {
        guard case .object(let members) = json else {
            throw ValueDecoder(value: json, codingPath: codingPath).mismatch(Change.self, "an object")
        }
        try self.init(fields: ChangeFields(members: .object(members), codingPath: codingPath))
    }

    /// A change from its members, however they were read (every rule of the change format's
    /// decoding is here, once).
    init(fields: ChangeFields) throws {
        device = try fields.string(.device)
        seq = try fields.integer(.seq)
        hlc = try fields.hlc(.hlc)
        let kind: Kind
        if let read = fields.readKind {
            kind = read
        } else {
            let kindText = try fields.string(.kind)
            guard let known = Kind(rawValue: kindText) else {
                throw fields.corrupted(
                    .kind,
                    "unknown change kind '\(kindText)'; expected one of "
                        + Kind.allCases.map(\.rawValue).joined(separator: ", "))
            }
            kind = known
        }
        switch kind {
        case .parameter:
            operation = .parameter(id: try fields.string(.id), value: try fields.value(.value))
        case .eligibility:
            let state = try fields.string(.state)
            switch state {
            case "eligible":
                operation = .eligibility(tip: try fields.string(.tip), state: .eligible)
            case "invalidated":
                let reasonText = try fields.string(.reason)
                guard let reason = InvalidationReason(rawValue: reasonText) else {
                    throw fields.corrupted(
                        .reason,
                        "unknown invalidation reason '\(reasonText)'; expected one of "
                            + InvalidationReason.allCases.map(\.rawValue).joined(separator: ", "))
                }
                operation = .eligibility(tip: try fields.string(.tip), state: .invalidated(reason))
            default:
                throw fields.corrupted(.state, "unknown eligibility state '\(state)'; expected eligible or invalidated")
            }
        case .display:
            operation = .display(
                tip: try fields.string(.tip),
                epoch: try Self.epoch(fields.member(.epoch), fields),
                count: try fields.integer(.count),
                duration: try fields.decode(Double.self, .duration),
                lastDisplayed: try fields.integer(.lastDisplayed))
        case .donation:
            operation = .donation(
                event: try fields.string(.event), id: try fields.string(.id), date: try fields.integer(.date),
                // `"info": null` is a payload (null), kept as sent; absent is no payload.
                info: fields.member(.info))
        case .donationsDeleted:
            operation = .donationsDeleted(event: try fields.string(.event))
        case .datastoreReset:
            operation = .datastoreReset
        }
        var unknown = fields.unknownMembers(of: kind)
        // `reason` is a field of an invalidation only: on `eligible` it is a newer client's, kept.
        if case .eligibility(_, .eligible) = operation, let reason = fields.member(.reason) {
            unknown[CodingKeys.reason.stringValue] = reason
        }
        unknownFields = unknown
    }

    /// A display's `epoch`: absent, or exactly `{"hlc", "device"}`. Anything else (`null`, other
    /// members) is refused rather than dropped, so a replica never serves an epoch other than the one sent.
    private static func epoch(_ value: JSONValue?, _ fields: ChangeFields) throws -> Stamp? {
        guard let value else { return nil }
        guard case .object(let members) = value, members.count == 2, members["hlc"] != nil, members["device"] != nil
        else {
            let found: String
            if case .object(let members) = value {
                found = "an object with members " + members.keys.sorted().map { "'\($0)'" }.joined(separator: ", ")
            } else {
                found = value.kindDescription
            }
            throw fields.corrupted(
                .epoch, "an epoch is an object with exactly the members hlc and device, or absent; found \(found)")
        }
        return try fields.decode(Stamp.self, .epoch)
    }

    /// Whether `key` is `device`, `seq`, `hlc`, `kind` or one of the fields a change of `kind`
    /// defines (anything else is kept in ``unknownFields``).
    static func isField(_ key: String, of kind: Kind) -> Bool {
        CodingKeys(rawValue: key).map { isField($0, of: kind) } ?? false
    }

    static func isField(_ key: CodingKeys, of kind: Kind) -> Bool {
        switch key {
        case .device, .seq, .hlc, .kind: true
        case .id: kind == .parameter || kind == .donation
        case .value: kind == .parameter
        case .tip: kind == .eligibility || kind == .display
        case .state, .reason: kind == .eligibility
        case .epoch, .count, .duration, .lastDisplayed: kind == .display
        case .event: kind == .donation || kind == .donationsDeleted
        case .date, .info: kind == .donation
        }
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
