public import Foundation
import Synchronization

extension Tips {
    /// The payload of an event donated without one.
    public struct EmptyDonation: Codable, Sendable, Hashable {
        public init() {}
    }

    /// TipKit's `DonationLimit`: how many donations an event keeps, and for how long.
    public typealias DonationLimit = TipSyncCore.DonationLimit

    /// A window for `donatedWithin(_:)`.
    public struct DonationTimeRange: Sendable, Hashable {
        public let seconds: TimeInterval
        public init(seconds: TimeInterval) { self.seconds = seconds }

        public static let minute = Self(seconds: 60)
        public static let hour = Self(seconds: 3_600)
        public static let day = Self(seconds: 86_400)
        public static let week = Self(seconds: 604_800)
        public static func minutes(_ n: Int) -> Self { Self(seconds: Double(n) * 60) }
        public static func hours(_ n: Int) -> Self { Self(seconds: Double(n) * 3_600) }
        public static func days(_ n: Int) -> Self { Self(seconds: Double(n) * 86_400) }
        public static func weeks(_ n: Int) -> Self { Self(seconds: Double(n) * 604_800) }

        /// Used by `#Rule` expansions to give `.days(5)` its type.
        // swift-format-ignore: AlwaysUseLowerCamelCase
        public static func __seconds(_ range: Self) -> TimeInterval { range.seconds }
    }

    /// Something the person did, counted by rules. Events are identified by id alone: tips using the
    /// same id share its donations.
    public struct Event<DonationInfo: Codable & Sendable>: Sendable, Identifiable {
        public let id: String
        public let donationLimit: DonationLimit?

        public init(id: String, donationLimit: DonationLimit? = nil) {
            self.id = id
            self.donationLimit = donationLimit
        }

        /// The event as data.
        public var definition: EventDefinition { EventDefinition(id: id, donationLimit: donationLimit) }

        /// Records a donation, dated now, in the shared replica.
        public func donate(_ info: DonationInfo) async {
            Tips.perform { try donate(info, in: $0) }
        }

        /// Fire-and-forget form of `donate`.
        public func sendDonation(_ info: DonationInfo) {
            Tips.perform { try donate(info, in: $0) }
        }

        /// Deletes every donation of this event, on every device.
        public func deleteDonations() async throws {
            guard let replica = Tips.replica else { throw TipsError.notConfigured }
            try replica.deleteDonations(event: id)
        }

        public func donate(_ info: DonationInfo, in replica: TipsReplica) throws {
            replica.register(event: definition)
            let payload: JSONValue? = DonationInfo.self == EmptyDonation.self ? nil : try JSONValue(encoding: info)
            try replica.donate(event: id, info: payload)
        }

        /// The donations rules see (the most recent 1000 within the limit), decoded.
        public func donations(in replica: TipsReplica) -> DonationList<DonationInfo> {
            replica.register(event: definition)
            let visible = replica.visibleDonations(of: id)
            return DonationList(
                items: visible.compactMap { donation in
                    let info: DonationInfo? =
                        DonationInfo.self == EmptyDonation.self
                        ? EmptyDonation() as? DonationInfo : try? (donation.info ?? .null).decode(as: DonationInfo.self)
                    return info.map {
                        Donation(date: Date(timeIntervalSince1970: Double(donation.date) / 1000), info: $0)
                    }
                })
        }

        /// What a `#Rule` closure over this event receives (`$0.donations`).
        public struct RuleInput {
            public let donations: DonationList<DonationInfo>
        }
    }

    /// One donation with its decoded payload; payload fields read as properties (`$0.yardID`).
    @dynamicMemberLookup
    public struct Donation<Info: Codable & Sendable>: Sendable {
        public let date: Date
        public let info: Info

        public subscript<T>(dynamicMember keyPath: KeyPath<Info, T>) -> T { info[keyPath: keyPath] }
    }

    /// Donations as rules query them: `count`, `filter`, `contains`, `donatedWithin`, subsets.
    public struct DonationList<Info: Codable & Sendable>: Sendable, RandomAccessCollection {
        public let items: [Donation<Info>]

        public var startIndex: Int { items.startIndex }
        public var endIndex: Int { items.endIndex }
        public subscript(position: Int) -> Donation<Info> { items[position] }

        public func donatedWithin(_ range: DonationTimeRange, now: Date = Date()) -> DonationList {
            DonationList(items: items.filter { $0.date >= now.addingTimeInterval(-range.seconds) })
        }

        public func filter(_ isIncluded: (Donation<Info>) throws -> Bool) rethrows -> DonationList {
            DonationList(items: try items.filter(isIncluded))
        }

        public func largestSubset<Key: Hashable>(groupedBy key: KeyPath<Info, Key>) -> DonationList {
            DonationList(
                items: Dictionary(grouping: items) { $0.info[keyPath: key] }.values.max { $0.count < $1.count } ?? [])
        }

        public func smallestSubset<Key: Hashable>(groupedBy key: KeyPath<Info, Key>) -> DonationList {
            DonationList(
                items: Dictionary(grouping: items) { $0.info[keyPath: key] }.values.min { $0.count < $1.count } ?? [])
        }
    }
}

extension Tips.Event where DonationInfo == Tips.EmptyDonation {
    /// An event donated without a payload.
    public init(id: String, donationLimit: Tips.DonationLimit? = nil) {
        self.id = id
        self.donationLimit = donationLimit
    }

    /// Records a donation, dated now.
    public func donate() async {
        await donate(Tips.EmptyDonation())
    }

    public func sendDonation() {
        sendDonation(Tips.EmptyDonation())
    }

    public func donate(in replica: TipsReplica) throws {
        try donate(Tips.EmptyDonation(), in: replica)
    }
}

extension TipsReplica {
    /// The donations rules see for an event: the most recent 1000 within its limit.
    public func visibleDonations(of event: String) -> [TipSyncCore.Donation] {
        core.withLock { core in Array(evaluator(core).donations(event)) }
    }
}
