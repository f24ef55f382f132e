public import TipSyncCore

/// One tip's state as the agent reports it: `status --json`, `watch` lines and the local API — what a
/// program needs to show the tip, and why it is not shown.
///
/// JSON: `{"id":"favorite","status":"available|pending|invalidated","reason":…,"displayCount":2,
/// "title":"…","message":"…"|null,"image":"…"|null,"actions":[{"id","title"}…]}`, with
/// `"heldForFirstSync":true` at the end when the tip is pending only because the device has not
/// completed its first sync (protocol.md §17.1). `reason`: for an invalidated tip, TipKit's
/// invalidation reason (`tipClosed`); for a pending one, the §13.9 step that holds it (`rule`,
/// `targeting`, `turnedOff`, `experiment`, `displayFrequency`, `firstSync`, …); `null` when available.
/// The content is the tip's in the device's locale (`init --locale`), and its experiment variant's
/// when the account is in one (protocol.md §13.10, §13.12).
public struct TipReport: Sendable, Hashable, Codable {
    public var id: String
    /// `available`, `pending` or `invalidated`.
    public var status: String
    /// Why it is not available (see the type's description); `nil` when it is.
    public var reason: String?
    /// Displays recorded on all devices since the tip's eligibility was last reset.
    public var displayCount: Int64
    /// Pending only because the device has not completed its first sync: it would be available.
    public var heldForFirstSync: Bool
    /// What the tip shows, localized, with the account's variant.
    public var title: String
    public var message: String?
    public var image: String?
    public var actions: [ActionDefinition]

    /// - Parameter pendingReason: the §13.9 reason code that holds a pending tip (ignored otherwise).
    public init(
        id: String, status: TipStatus, displayCount: Int64, heldForFirstSync: Bool = false,
        pendingReason: String? = nil, title: String? = nil, message: String? = nil, image: String? = nil,
        actions: [ActionDefinition] = []
    ) {
        self.id = id
        self.displayCount = displayCount
        self.heldForFirstSync = heldForFirstSync
        self.title = title ?? id
        self.message = message
        self.image = image
        self.actions = actions
        switch status {
        case .available: (self.status, reason) = ("available", nil)
        case .pending: (self.status, reason) = ("pending", pendingReason ?? (heldForFirstSync ? "firstSync" : nil))
        case .invalidated(let why): (self.status, reason) = ("invalidated", why.rawValue)
        }
    }

    private enum CodingKeys: String, CodingKey {
        case id, status, reason, displayCount, title, message, image, actions, heldForFirstSync
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        status = try container.decode(String.self, forKey: .status)
        reason = try container.decodeIfPresent(String.self, forKey: .reason)
        displayCount = try container.decode(Int64.self, forKey: .displayCount)
        title = try container.decodeIfPresent(String.self, forKey: .title) ?? id
        message = try container.decodeIfPresent(String.self, forKey: .message)
        image = try container.decodeIfPresent(String.self, forKey: .image)
        actions = try container.decodeIfPresent([ActionDefinition].self, forKey: .actions) ?? []
        heldForFirstSync = try container.decodeIfPresent(Bool.self, forKey: .heldForFirstSync) ?? false
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(status, forKey: .status)
        try container.encode(reason, forKey: .reason)  // `null`, never omitted
        try container.encode(displayCount, forKey: .displayCount)
        try container.encode(title, forKey: .title)
        try container.encode(message, forKey: .message)
        try container.encode(image, forKey: .image)
        try container.encode(actions, forKey: .actions)
        if heldForFirstSync { try container.encode(true, forKey: .heldForFirstSync) }
    }

    /// The status as `status` prints it: `invalidated (tipClosed)`, `pending (experiment)`,
    /// `pending (held for the first sync)`.
    public var statusText: String {
        if heldForFirstSync { return "\(status) (held for the first sync)" }
        if let reason { return "\(status) (\(reason))" }
        return status
    }

    /// The JSON object on one line, keys in the documented order.
    public var jsonLine: String {
        func text(_ value: String?) -> String { value.map { JSONValue.string($0).canonicalText } ?? "null" }
        let actionsText = actions.map { #"{"id":\#(text($0.id)),"title":\#(text($0.title))}"# }
            .joined(separator: ",")
        return
            #"{"id":\#(text(id)),"status":"\#(status)","reason":\#(text(reason)),"displayCount":\#(displayCount),"#
            + #""title":\#(text(title)),"message":\#(text(message)),"image":\#(text(image)),"actions":[\#(actionsText)]"#
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
