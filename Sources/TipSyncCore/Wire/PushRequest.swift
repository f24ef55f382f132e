/// `POST /v1/push` body: a batch of one device's changes, in sequence order.
public struct PushRequest: Sendable, Hashable, Codable {
    public var changes: [Change]

    public init(changes: [Change]) {
        self.changes = changes
    }

    /// The body as bytes, each change in its canonical JSON (`protocol.md` §1): what a device sends.
    public var canonicalBody: [UInt8] {
        var body = Array(#"{"changes":["#.utf8)
        for (index, change) in changes.enumerated() {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            body.append(contentsOf: change.canonicalJSON.utf8)
        }
        body.append(contentsOf: "]}".utf8)
        return body
    }
}

extension PushRequest {
    /// The most bytes of body a client puts in one push (protocol.md §7): a second of the server's
    /// default body budget, and a quarter of its default body limit, so that every push fits what a
    /// server with default settings admits however large the outbox.
    public static let maxClientBodyBytes = 1_048_576

    /// The bytes of the largest client body left for its changes' texts and the commas between them:
    /// ``maxClientBodyBytes`` but for `{"changes":[` and `]}`.
    public static let maxClientChangesBytes = maxClientBodyBytes - #"{"changes":[]}"#.utf8.count

    /// The body of a push of the first changes of `changes` — as many as fit in `maxBodyBytes`,
    /// and never fewer than one — and how many it holds.
    public static func body(fitting changes: some Collection<Change>, maxBodyBytes: Int = maxClientBodyBytes)
        -> (count: Int, body: [UInt8])
    {
        var body = Array(#"{"changes":["#.utf8)
        var count = 0
        for change in changes {
            let text = change.canonicalJSON.utf8
            // The separator, the change, and the closing "]}".
            if count > 0, body.count + 1 + text.count + 2 > maxBodyBytes { break }
            if count > 0 { body.append(UInt8(ascii: ",")) }
            body.append(contentsOf: text)
            count += 1
        }
        body.append(contentsOf: "]}".utf8)
        return (count, body)
    }
}

/// `POST /v1/push` success body.
public struct PushResponse: Sendable, Hashable, Codable {
    /// Changes stored by this request.
    public var accepted: Int
    /// Changes the server already had (a retried push): ignored.
    public var duplicates: Int
    /// The highest sequence number of the pushing device the server has stored.
    public var highestSeq: Int64
    /// The server's clock, milliseconds since 1970.
    public var serverTime: Int64
    /// The server database's cursor generation: it changes only when operators rotate it after
    /// restoring a backup, so "unchanged" means the server has lost nothing it ever stored.
    public var generation: String?

    public init(accepted: Int, duplicates: Int, highestSeq: Int64, serverTime: Int64, generation: String? = nil) {
        self.accepted = accepted
        self.duplicates = duplicates
        self.highestSeq = highestSeq
        self.serverTime = serverTime
        self.generation = generation
    }
}

extension PushResponse {
    /// The answer as ``JSONCoding/encoder`` writes it (members in sorted order), without an encoder:
    /// the server writes one per push.
    public var jsonText: String {
        var text = #"{"accepted":\#(accepted),"duplicates":\#(duplicates),"#
        if let generation { text += #""generation":\#(JSONValue.string(generation).canonicalText),"# }
        text += #""highestSeq":\#(highestSeq),"serverTime":\#(serverTime)}"#
        return text
    }
}
