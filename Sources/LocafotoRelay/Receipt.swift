import Foundation

/// What became of a deposit (the RECEIPTS `state`).
public enum ReceiptState: String, Codable, Sendable {
    /// The recipient accepted the offer.
    case delivered
    /// The recipient rejected it.
    case rejected
    /// Nobody decided in time: the relay's expiry, or the recipient's own inbox expiry.
    case expired
}

/// One item's outcome as the recipient reported it (ITEM_RESULT), or as the relay decided it.
public struct ReceiptItem: Codable, Sendable, Equatable {
    public static let maxStatusBytes = 32
    public static let maxMessageBytes = 512

    public var item: Int
    /// "imported", "queued", "failed" (a string: newer recipients may report new statuses).
    public var status: String
    public var code: UInt16?
    public var message: String?

    public init(item: Int, status: String, code: UInt16? = nil, message: String? = nil) {
        self.item = item
        self.status = status
        self.code = code
        self.message = message
    }
}

/// A receipt waiting for its sender.
public struct ReceiptRecord: Sendable, Equatable {
    public var offerID: String
    public var recipientKey: [UInt8]
    public var state: ReceiptState
    /// The recipient's DECISION ("accepted", "rejected", "expired"); nil when the relay expired it.
    public var decision: String?
    /// The recipient's decision receipt signature (64 bytes), when it sent one.
    public var receipt: [UInt8]?
    public var items: [ReceiptItem]
    public var at: Date
}
