/// A fast writer of canonical JSON (object keys sorted by their UTF-8 bytes, no whitespace, only the
/// escapes JSON requires) for the hot paths: every stored change-log entry and server log row.
/// `JSONEncoder` produces equivalent JSON but costs several times more per change.
enum CanonicalJSON {
    static func write(_ value: JSONValue, into output: inout String) {
        switch value {
        case .null: output += "null"
        case .bool(let flag): output += flag ? "true" : "false"
        case .int(let number): output += String(number)
        case .double(let number): writeDouble(number, into: &output)
        case .string(let text): writeString(text, into: &output)
        case .array(let items):
            output += "["
            for (index, item) in items.enumerated() {
                if index > 0 { output += "," }
                write(item, into: &output)
            }
            output += "]"
        case .object(let members):
            output += "{"
            for (index, key) in members.keys.sorted(by: utf8Precedes).enumerated() {
                if index > 0 { output += "," }
                writeString(key, into: &output)
                output += ":"
                write(members[key]!, into: &output)
            }
            output += "}"
        }
    }

    static func utf8Precedes(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.lexicographicallyPrecedes(rhs.utf8)
    }

    static func writeDouble(_ number: Double, into output: inout String) {
        guard number.isFinite else {
            output += "null"  // JSON has no infinities or NaN
            return
        }
        if number == number.rounded(), abs(number) < 1e15 {
            output += String(Int64(number))  // integral: written as an integer, equal as a number
        } else {
            output += "\(number)"
        }
    }

    static func writeString(_ text: String, into output: inout String) {
        output += "\""
        var needsEscaping = false
        for byte in text.utf8 where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
            needsEscaping = true
            break
        }
        if !needsEscaping {
            output += text
        } else {
            for scalar in text.unicodeScalars {
                switch scalar {
                case "\"": output += "\\\""
                case "\\": output += "\\\\"
                case "\n": output += "\\n"
                case "\r": output += "\\r"
                case "\t": output += "\\t"
                case _ where scalar.value < 0x20:
                    let hex = String(scalar.value, radix: 16)
                    output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                default: output.unicodeScalars.append(scalar)
                }
            }
        }
        output += "\""
    }
}

extension Change {
    /// The change as canonical JSON: the same fields as its `Codable` form, keys sorted.
    public var canonicalJSON: String {
        var fields: [(String, JSONValue)] = [
            ("device", .string(device)), ("seq", .int(seq)), ("hlc", .string(hlc.description)),
            ("kind", .string(kind.rawValue)),
        ]
        switch operation {
        case .parameter(let id, let value):
            fields += [("id", .string(id)), ("value", value)]
        case .eligibility(let tip, let state):
            fields.append(("tip", .string(tip)))
            switch state {
            case .eligible: fields.append(("state", .string("eligible")))
            case .invalidated(let reason):
                fields += [("state", .string("invalidated")), ("reason", .string(reason.rawValue))]
            }
        case .display(let tip, let epoch, let count, let duration, let lastDisplayed):
            fields += [
                ("tip", .string(tip)), ("count", .int(count)), ("duration", .double(duration)),
                ("lastDisplayed", .int(lastDisplayed)),
            ]
            if let epoch {
                fields.append(
                    ("epoch", .object(["hlc": .string(epoch.hlc.description), "device": .string(epoch.device)])))
            }
        case .donation(let event, let id, let date, let info):
            fields += [("event", .string(event)), ("id", .string(id)), ("date", .int(date))]
            if let info { fields.append(("info", info)) }
        case .donationsDeleted(let event):
            fields.append(("event", .string(event)))
        case .datastoreReset:
            break
        }
        fields.sort { CanonicalJSON.utf8Precedes($0.0, $1.0) }
        var output = "{"
        output.reserveCapacity(160)
        for (index, (key, value)) in fields.enumerated() {
            if index > 0 { output += "," }
            CanonicalJSON.writeString(key, into: &output)
            output += ":"
            CanonicalJSON.write(value, into: &output)
        }
        output += "}"
        return output
    }
}
