import TipSyncCore

/// One tip's state as the agent reports it: `status --json`, `watch` lines and the local API.
///
/// JSON: `{"id":"favorite","status":"available|pending|invalidated","reason":"tipClosed"|null,"displayCount":2}`,
/// with `"heldForFirstSync":true` at the end when the tip is pending only because the device has not
/// completed its first sync (protocol.md §17.1).
public struct TipReport: Sendable, Hashable, Codable {
    public var id: String
    /// `available`, `pending` or `invalidated`.
    public var status: String
    /// Why it is invalidated (TipKit's `InvalidationReason` names); `nil` otherwise.
    public var reason: String?
    /// Displays recorded on all devices since the tip's eligibility was last reset.
    public var displayCount: Int64
    /// Pending only because the device has not completed its first sync: it would be available.
    public var heldForFirstSync: Bool

    public init(id: String, status: TipStatus, displayCount: Int64, heldForFirstSync: Bool = false) {
        self.id = id
        self.displayCount = displayCount
        self.heldForFirstSync = heldForFirstSync
        switch status {
        case .available: (self.status, reason) = ("available", nil)
        case .pending: (self.status, reason) = ("pending", nil)
        case .invalidated(let why): (self.status, reason) = ("invalidated", why.rawValue)
        }
    }

    private enum CodingKeys: String, CodingKey { case id, status, reason, displayCount, heldForFirstSync }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        status = try container.decode(String.self, forKey: .status)
        reason = try container.decodeIfPresent(String.self, forKey: .reason)
        displayCount = try container.decode(Int64.self, forKey: .displayCount)
        heldForFirstSync = try container.decodeIfPresent(Bool.self, forKey: .heldForFirstSync) ?? false
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(status, forKey: .status)
        try container.encode(reason, forKey: .reason)  // `null`, never omitted
        try container.encode(displayCount, forKey: .displayCount)
        if heldForFirstSync { try container.encode(true, forKey: .heldForFirstSync) }
    }

    /// The status as `status` prints it: `invalidated (tipClosed)`, `pending (held for the first sync)`.
    public var statusText: String {
        if let reason { return "\(status) (\(reason))" }
        return heldForFirstSync ? "\(status) (held for the first sync)" : status
    }

    /// The JSON object on one line, keys in the documented order.
    public var jsonLine: String {
        let reasonText = reason.map { JSONValue.string($0).canonicalText } ?? "null"
        return
            #"{"id":\#(JSONValue.string(id).canonicalText),"status":"\#(status)","reason":\#(reasonText),"displayCount":\#(displayCount)"#
            + (heldForFirstSync ? #","heldForFirstSync":true}"# : "}")
    }
}

/// `status --json`: `{"tips":[…]}`, tips in id order.
public struct StatusReport: Sendable, Hashable, Codable {
    public var tips: [TipReport]

    public init(tips: [TipReport]) {
        self.tips = tips
    }

    public var jsonLine: String {
        #"{"tips":["# + tips.map(\.jsonLine).joined(separator: ",") + "]}"
    }
}
