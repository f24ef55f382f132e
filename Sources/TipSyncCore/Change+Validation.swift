import Foundation

/// What a well-formed change may carry beyond its JSON types (`protocol.md`, sections 1 and 3).
/// The server refuses a batch holding a change that breaks any of these (`422 invalid_change` naming
/// the field), and writers never produce one, so every replica holds exactly what the writer held.
extension Change {
    /// A rule a change breaks: the field in protocol terms (`seq`, `value.limits[2]`) and why.
    public struct Violation: Error, Sendable, Hashable, CustomStringConvertible {
        public var field: String
        public var message: String
        public var description: String { field.isEmpty ? message : "\(field): \(message)" }
    }

    /// The most UTF-8 bytes a change's canonical JSON text (protocol.md, section 1) may have: 64 KiB
    /// (protocol.md, section 3). It bounds what one change costs every replica and the server's one
    /// writer, and lets every page (512 KiB of change text) hold several.
    public static let maximumTextBytes = 65_536

    /// The size rule for a change whose canonical JSON text has `textBytes` bytes: `nil` within
    /// ``maximumTextBytes``, otherwise a violation of the whole change (its `field` is empty).
    public static func sizeViolation(textBytes: Int) -> Violation? {
        guard textBytes > maximumTextBytes else { return nil }
        return Violation(
            field: "",
            message:
                "its canonical JSON text is \(textBytes) bytes, over the \(maximumTextBytes) bytes a change may "
                + "have (protocol.md, section 3)")
    }

    /// The first rule this change breaks, or `nil` when it is well-formed.
    public var violation: Violation? {
        let limit = JSONNumberLimits.maxInteger
        func outside(_ value: Int64, _ field: String, from low: Int64 = 0) -> Violation? {
            (low...limit).contains(value)
                ? nil : Violation(field: field, message: "must be an integer from \(low) to \(limit), got \(value)")
        }
        guard (1...limit).contains(seq) else {
            return Violation(
                field: "seq",
                message: "a sequence number is an integer from 1 (the device's first change) to \(limit), got \(seq)")
        }
        if let (field, id) = operation.namedID, id.isEmpty {
            return Violation(field: field, message: "ids are not empty")
        }
        if let (field, id) = operation.namedID, !id.isNFC {
            return Violation(
                field: field,
                message:
                    "ids must be in Unicode normalization form C (NFC): canonically equivalent spellings of one "
                    + "id would be one record on some replicas and two on others")
        }
        // A newer client's fields are kept and served as sent, so their numbers obey the model too.
        for key in unknownFields.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            if let violation = unknownFields[key]?.numberViolation(at: key) { return violation }
        }
        switch operation {
        case .parameter(_, let value):
            return value.numberViolation(at: "value")
        case .display(_, let epoch, let count, let duration, let lastDisplayed):
            // An epoch is the stamp of the eligible or datastoreReset that started it: its device wrote
            // a change, so it is a device name.
            if let epoch, let problem = NameRules.violation(epoch.device) {
                return Violation(field: "epoch.device", message: "a device name \(problem)")
            }
            if let violation = outside(count, "count") { return violation }
            guard duration.isFinite, duration >= 0, duration <= Double(limit) else {
                return Violation(field: "duration", message: "must be a number of seconds from 0 to \(limit)")
            }
            return outside(lastDisplayed, "lastDisplayed")
        case .donation(_, let id, let date, let info):
            guard id.unicodeScalars.elementsEqual("\(device):\(seq)".unicodeScalars) else {
                return Violation(
                    field: "id",
                    message: "a donation's id is \"<device>:<seq>\" of its change, here \"\(device):\(seq)\"")
            }
            if let violation = outside(date, "date") { return violation }
            return info?.numberViolation(at: "info")
        case .eligibility, .donationsDeleted, .datastoreReset:
            return nil
        }
    }
}

extension Change.Operation {
    /// The tip, parameter or event id the operation names, with its field name.
    var namedID: (field: String, id: String)? {
        switch self {
        case .parameter(let id, _): ("id", id)
        case .eligibility(let tip, _), .display(let tip, _, _, _, _): ("tip", tip)
        case .donation(let event, _, _, _), .donationsDeleted(let event): ("event", event)
        case .datastoreReset: nil
        }
    }

    /// The same operation with every number of its JSON payload (a parameter's `value`, a
    /// donation's `info`) in canonical form: what a writer stores and sends.
    public var canonicalNumbers: Change.Operation {
        switch self {
        case .parameter(let id, let value): .parameter(id: id, value: value.canonicalNumbers)
        case .donation(let event, let id, let date, let info):
            .donation(event: event, id: id, date: date, info: info?.canonicalNumbers)
        default: self
        }
    }
}

extension JSONValue {
    /// The first number inside this value that the protocol's number model cannot carry exactly:
    /// an integral number beyond ±(2^53 − 1) (`12345678901234567890123` would reach other replicas as
    /// `1.2345678901234568e+22`), or a non-finite one.
    public func numberViolation(at path: String) -> Change.Violation? {
        guard let found = firstNumberViolation() else { return nil }
        // The path is written only for the number refused: a value of two million numbers is
        // checked without two million path strings (issue 59).
        let field = found.reversedPath.reversed().reduce(into: path) { field, step in
            switch step {
            case .index(let index): field += "[\(index)]"
            case .member(let key): field += ".\(key)"
            }
        }
        return .init(field: field, message: found.message)
    }

    /// One step from a value to a value inside it.
    private enum PathStep {
        case index(Int)
        case member(String)
    }

    /// The first number the number model cannot carry, with the steps to it from the innermost out.
    private func firstNumberViolation() -> (message: String, reversedPath: [PathStep])? {
        let limit = JSONNumberLimits.maxInteger
        switch self {
        case .int(let value) where !(-limit...limit).contains(value):
            return ("integers must lie within ±\(limit) (2^53 − 1), got \(value)", [])
        case .double(let value) where !value.isFinite:
            return ("numbers must be finite", [])
        case .double(let value) where value == value.rounded() && abs(value) > Double(limit):
            return (
                "integral numbers must lie within ±\(limit) (2^53 − 1); send it as a string to keep it exact", []
            )
        case .array(let items):
            for (index, item) in items.enumerated() {
                if var found = item.firstNumberViolation() {
                    found.reversedPath.append(.index(index))
                    return found
                }
            }
            return nil
        case .object(let members):
            for key in members.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
                if var found = members[key]?.firstNumberViolation() {
                    found.reversedPath.append(.member(key))
                    return found
                }
            }
            return nil
        default:
            return nil
        }
    }

    /// The same value with every number in its one canonical form: an integral number as an integer
    /// (`1.0` is `1`), anything else as a double. What a writer stores, so it holds exactly what
    /// every other replica reads back from the canonical text.
    public var canonicalNumbers: JSONValue {
        switch self {
        case .double(let value) where value == value.rounded() && abs(value) <= Double(JSONNumberLimits.maxInteger):
            return .int(Int64(value))
        case .array(let items): return .array(items.map(\.canonicalNumbers))
        case .object(let members): return .object(members.mapValues(\.canonicalNumbers))
        default: return self
        }
    }
}

extension String {
    /// Whether the text is in Unicode normalization form C. ASCII always is (the common case costs
    /// one pass over the bytes).
    public var isNFC: Bool {
        if utf8.allSatisfy({ $0 < 0x80 }) { return true }
        return utf8.elementsEqual(precomposedStringWithCanonicalMapping.utf8)
    }
}
