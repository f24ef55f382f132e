import TipSyncCore

/// A local change the server refused with `422 invalid_change` and the sync client set aside, so
/// that the changes after it still sync (protocol.md §17.2).
public struct RefusedChange: Sendable, Hashable {
    /// The change as it was written (its sequence number is now the next change's).
    public var change: Change
    /// The server's message: the field in protocol terms and what is wrong with it.
    public var reason: String

    public init(change: Change, reason: String) {
        self.change = change
        self.reason = reason
    }

    /// The index in the batch of the change an `invalid_change` answer refuses: its `change` member
    /// (protocol revision 2.9); none when the answer has a `field` but no `change` (the batch's
    /// numbering); from a server before 2.9, which has neither, the message's start.
    public static func index(in detail: ErrorBody.Detail) -> Int? {
        if let change = detail.change { return change }
        if detail.field != nil { return nil }
        return index(in: detail.message)
    }

    /// The index in the batch of the change an `invalid_change` message names (`changes[3].value: …`),
    /// unless the message is about the batch's numbering (`.seq`), which no one change is to blame for.
    public static func index(in message: String) -> Int? {
        guard message.hasPrefix("changes["), let close = message.firstIndex(of: "]") else { return nil }
        let digits = message[message.index(message.startIndex, offsetBy: 8)..<close]
        guard let index = Int(digits), !message[close...].hasPrefix("].seq") else { return nil }
        return index
    }
}
