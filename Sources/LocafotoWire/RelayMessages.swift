// Messages spoken with a relay (cap "relay", protocol/messages.md "Relay"). They are handled by
// the agent outside ReceiverSession, which refuses them like any other out-of-place message.

/// COLLECT: the initiator's first message to a relay, saying what it comes for.
public struct Collect: Codable, Sendable, Equatable {
    public var want: CollectWant

    public init(want: CollectWant) { self.want = want }
}

public enum CollectWant: String, Codable, Sendable {
    /// Deposits addressed to the collector (answered with QUEUE, then an OFFER if any).
    case offers
    /// Receipts for the collector's own deposits (answered with RECEIPTS).
    case receipts
}

/// QUEUE: how many deposits wait for the collector. With n > 0 the relay sends the oldest one's
/// OFFER next and acts as its sender for the rest of the session.
public struct Queue: Codable, Sendable, Equatable {
    public var offers: Int

    public init(offers: Int) { self.offers = offers }

    private enum CodingKeys: String, CodingKey { case offers }

    public init(from decoder: any Decoder) throws {
        offers = try decoder.container(keyedBy: CodingKeys.self).decode(Int.self, forKey: .offers)
        guard offers >= 0 else { throw WireError(.protocolViolation, "QUEUE offers must not be negative") }
    }
}

/// RECEIPTS: outcomes of the collector's deposits, at most `maxReceipts` per message.
public struct Receipts: Codable, Sendable, Equatable {
    public static let maxReceipts = 100

    public var receipts: [Receipt]
    /// More receipts wait: ask again (another session) later.
    public var more: Bool

    public init(receipts: [Receipt], more: Bool) {
        self.receipts = receipts
        self.more = more
    }

    private enum CodingKeys: String, CodingKey { case receipts, more }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        receipts = try c.decode([Receipt].self, forKey: .receipts)
        more = try c.decode(Bool.self, forKey: .more)
        try validate()
    }

    /// The limits and field lengths of messages.md; decoding and encoding both apply them.
    public func validate() throws {
        guard receipts.count <= Self.maxReceipts else {
            throw WireError(
                .protocolViolation, "RECEIPTS carries \(receipts.count) receipts; at most \(Self.maxReceipts)")
        }
        for r in receipts { try r.validate() }
    }
}

/// What became of one deposit, as the relay reports it to the depositor.
public struct Receipt: Codable, Sendable, Equatable {
    public static let maxItems = 10_000

    public var offer: String
    /// The recipient's Ed25519 key (32 bytes).
    public var to: Bytes
    public var state: ReceiptState
    /// The recipient's decision; nil when it never decided (state expired by the relay).
    public var decision: DecisionKind?
    /// The recipient's decision receipt signature (64 bytes), when it sent one: the only part of
    /// the receipt the relay cannot forge.
    public var receipt: Bytes?
    public var items: [ReceiptItem]
    /// When the relay learnt the outcome, RFC 3339 UTC ("2026-11-21T10:00:00Z").
    public var at: String

    public init(
        offer: String, to: [UInt8], state: ReceiptState, decision: DecisionKind? = nil, receipt: [UInt8]? = nil,
        items: [ReceiptItem] = [], at: String
    ) {
        self.offer = offer
        self.to = Bytes(to)
        self.state = state
        self.decision = decision
        self.receipt = receipt.map(Bytes.init)
        self.items = items
        self.at = at
    }

    public func validate() throws {
        guard to.bytes.count == 32 else {
            throw WireError(.protocolViolation, "receipt 'to' must be a 32-byte Ed25519 key")
        }
        if let receipt, receipt.bytes.count != 64 {
            throw WireError(.protocolViolation, "receipt 'receipt' must be a 64-byte signature")
        }
        guard items.count <= Self.maxItems else {
            throw WireError(.protocolViolation, "a receipt lists \(items.count) items; at most \(Self.maxItems)")
        }
    }
}

public enum ReceiptState: String, Codable, Sendable {
    /// The deposit reached the recipient (its decision and item results follow).
    case delivered
    /// The relay or the recipient refused it.
    case rejected
    /// Nobody collected it in time; the relay dropped it.
    case expired
}

/// One item's outcome at the recipient (ITEM_RESULT as relayed).
public struct ReceiptItem: Codable, Sendable, Equatable {
    public var item: Int
    public var status: ItemStatus
    public var code: WireErrorCode?
    public var message: String?

    public init(item: Int, status: ItemStatus, code: WireErrorCode? = nil, message: String? = nil) {
        self.item = item
        self.status = status
        self.code = code
        self.message = message
    }
}
