/// One donation to an event: unique id, the moment it was donated and its optional payload.
public struct Donation: Sendable, Hashable {
    /// Unique across all devices: `"<device>:<seq>"` of the change that created it.
    public var id: String
    /// When it was donated, in milliseconds since 1970 (the donating device's corrected clock).
    public var date: Int64
    /// The payload (`Event<Info>`'s `Info` as JSON), or `nil` for `Event` without info.
    public let info: JSONValue?
    /// The payload's top-level members when it has more than one, for rules: a short array scanned
    /// linearly is much faster than hashing the field name for every donation a rule looks at. A
    /// payload of one member (the usual `Event<Info>`) is read from `info` itself, with no array to
    /// allocate for each of a cold start's donations.
    let fields: [(name: String, value: JSONValue)]
    /// Who wrote it and when: deletions and datastore resets remove donations stamped at or before them.
    public var stamp: Stamp

    public init(id: String, date: Int64, info: JSONValue?, stamp: Stamp) {
        self.id = id
        self.date = date
        self.info = info
        self.stamp = stamp
        if case .object(let members)? = info, members.count > 1 {
            var fields: [(name: String, value: JSONValue)] = []
            fields.reserveCapacity(members.count)
            for (name, value) in members { fields.append((name, value)) }
            fields.sort { $0.name < $1.name }
            self.fields = fields
        } else {
            fields = []
        }
    }

    /// A donation that holds no references: room in a list, swapped out before anyone reads it.
    static let placeholder = Donation(id: "", date: 0, info: nil, stamp: Stamp(hlc: .zero, device: ""))

    /// A payload member by name, or `nil`.
    public func field(_ name: String) -> JSONValue? {
        if case .object(let members)? = info, members.count == 1, let (only, value) = members.first {
            return only == name ? value : nil
        }
        return fields.withUnsafeBufferPointer { buffer in
            guard let pointer = buffer.baseAddress else { return nil }
            for index in 0..<buffer.count where pointer[index].name == name { return pointer[index].value }
            return nil
        }
    }

    public static func == (lhs: Donation, rhs: Donation) -> Bool {
        lhs.id == rhs.id && lhs.date == rhs.date && lhs.info == rhs.info && lhs.stamp == rhs.stamp
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(date)
        hasher.combine(info)
        hasher.combine(stamp)
    }

    /// The order donations are kept and trimmed in: by date, then id.
    public static func precedes(_ lhs: borrowing Donation, _ rhs: borrowing Donation) -> Bool {
        if lhs.date != rhs.date { return lhs.date < rhs.date }
        return bytesPrecede(lhs.id, rhs.id)
    }

    /// `lhs.utf8.lexicographicallyPrecedes(rhs.utf8)` over the strings' contiguous bytes: code point
    /// order (never canonical equivalence), without iterating two views element by element.
    static func bytesPrecede(_ lhs: String, _ rhs: String) -> Bool {
        let compared = lhs.utf8.withContiguousStorageIfAvailable { left in
            rhs.utf8.withContiguousStorageIfAvailable { right in
                for index in 0..<min(left.count, right.count) where left[index] != right[index] {
                    return left[index] < right[index]
                }
                return left.count < right.count
            }
        }
        // Bridged or other non-contiguous strings (never from the wire): the same order, slower.
        return (compared ?? nil) ?? lhs.utf8.lexicographicallyPrecedes(rhs.utf8)
    }
}

/// How many donations an event keeps (TipKit's `DonationLimit`); trimming is deterministic:
/// the newest `maximumCount` by (date, id), and none older than `maximumAge`.
public struct DonationLimit: Sendable, Hashable, Codable {
    public var maximumCount: Int?
    /// Seconds.
    public var maximumAge: Double?

    public init(maximumCount: Int? = nil, maximumAge: Double? = nil) {
        self.maximumCount = maximumCount
        self.maximumAge = maximumAge
    }

    /// No trimming.
    public static let unlimited = DonationLimit()
}
