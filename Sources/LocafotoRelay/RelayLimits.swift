import Foundation
import LocafotoWire

/// How much a relay holds. Quotas count committed, undelivered deposits plus deposits being
/// written, so concurrent senders cannot overshoot them together.
public struct RelayLimits: Sendable, Equatable, Codable {
    public static let gibibyte: Int64 = 1 << 30
    public static let day: TimeInterval = 86_400

    public var maxBytesPerSender: Int64
    public var maxItemsPerSender: Int
    public var maxBytesTotal: Int64
    public var maxItemsTotal: Int
    /// How long a deposit waits for its recipient before it is dropped (with an `expired` receipt).
    public var expiry: TimeInterval
    /// How long receipts wait for their sender to collect them.
    public var receiptRetention: TimeInterval

    public init(
        maxBytesPerSender: Int64 = 2 * RelayLimits.gibibyte, maxItemsPerSender: Int = 1000,
        maxBytesTotal: Int64 = 20 * RelayLimits.gibibyte, maxItemsTotal: Int = 10_000,
        expiry: TimeInterval = 7 * RelayLimits.day, receiptRetention: TimeInterval = 30 * RelayLimits.day
    ) {
        self.maxBytesPerSender = maxBytesPerSender
        self.maxItemsPerSender = maxItemsPerSender
        self.maxBytesTotal = maxBytesTotal
        self.maxItemsTotal = maxItemsTotal
        self.expiry = expiry
        self.receiptRetention = receiptRetention
    }

    /// Throws `configuration` for limits that would make the relay useless or nonsensical.
    public func validate() throws {
        guard maxBytesPerSender > 0, maxBytesTotal > 0, maxItemsPerSender > 0, maxItemsTotal > 0 else {
            throw RelayError(
                .configuration, .internalError, "relay limits must be positive (bytes and items, per sender and total)")
        }
        guard expiry > 0, receiptRetention > 0 else {
            throw RelayError(
                .configuration, .internalError, "relay expiry and receipt retention must be positive durations")
        }
    }
}

/// Sizes as people read them in refusal messages: "1.9 GiB", "512.0 KiB", "12 bytes".
enum ByteCount {
    static func text(_ n: Int64) -> String {
        let units: [(String, Int64)] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)]
        for (name, size) in units where n >= size {
            // Rounded down, so "1.9 GiB held" is never shown as "2.0" next to a 2.0 GiB limit.
            let tenths = n / size * 10 + (n % size) * 10 / size
            return "\(tenths / 10).\(tenths % 10) \(name)"
        }
        return n == 1 ? "1 byte" : "\(n) bytes"
    }
}
