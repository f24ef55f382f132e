import Foundation

/// Reads a `text/event-stream` body as it arrives (the server-sent events of `GET /v1/live`,
/// protocol.md §9): feed it the bytes in whatever pieces they come, get back the complete events.
/// Lines end in `\n`, `\r\n` or `\r`; comments (`: heartbeat`) and fields other than `event` and
/// `data` are skipped; several `data` lines join with `\n`.
package struct ServerSentEvents: Sendable {
    /// One event: its name (`message` when the block names none) and data.
    package struct Event: Sendable, Hashable {
        package var name: String
        package var data: String

        package init(name: String, data: String) {
            self.name = name
            self.data = data
        }
    }

    private var line: [UInt8] = []
    private var name: String?
    private var data: [String] = []
    private var afterCarriageReturn = false

    package init() {}

    /// The events completed by `bytes`.
    package mutating func feed(_ bytes: some Sequence<UInt8>) -> [Event] {
        var events: [Event] = []
        for byte in bytes {
            if afterCarriageReturn {
                afterCarriageReturn = false
                if byte == UInt8(ascii: "\n") { continue }
            }
            switch byte {
            case UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                afterCarriageReturn = byte == UInt8(ascii: "\r")
                if let event = endLine() { events.append(event) }
            default:
                line.append(byte)
            }
        }
        return events
    }

    /// Ends the current line; an empty line ends the event.
    private mutating func endLine() -> Event? {
        defer { line.removeAll(keepingCapacity: true) }
        guard !line.isEmpty else {
            defer {
                name = nil
                data = []
            }
            guard name != nil || !data.isEmpty else { return nil }
            return Event(name: name ?? "message", data: data.joined(separator: "\n"))
        }
        guard line[0] != UInt8(ascii: ":") else { return nil }
        let colon = line.firstIndex(of: UInt8(ascii: ":")) ?? line.endIndex
        let field = String(decoding: line[..<colon], as: UTF8.self)
        var valueStart = colon < line.endIndex ? colon + 1 : colon
        if valueStart < line.endIndex, line[valueStart] == UInt8(ascii: " ") { valueStart += 1 }
        let value = String(decoding: line[valueStart...], as: UTF8.self)
        switch field {
        case "event": name = value
        case "data": data.append(value)
        default: break
        }
        return nil
    }
}
