/// Constants of the Locafoto wire protocol, version 1 (protocol/README.md).
public enum WireProtocol {
    public static let version = 1
    /// Noise prologue: binds the protocol version into the handshake hash, so peers speaking
    /// another version fail the handshake instead of misreading each other.
    public static let prologue: [UInt8] = Array("LOCAFOTO/1".utf8)
    /// DNS-SD service type.
    public static let serviceType = "_locafoto._tcp"
    /// Noise caps every message at 65535 bytes (spec §3); a frame carries exactly one.
    public static let maxFrameLength = 65535
    /// Largest plaintext in one transport message (65535 − 16-byte tag).
    public static let maxMessageLength = maxFrameLength - 16
    /// Photo bytes per ITEM_DATA message: a round 64 KiB less the 13-byte message header and slack.
    public static let chunkLength = 65_024
    /// Items per OFFER message; larger offers are split with `more: true`.
    public static let maxItemsPerOfferMessage = 128
}

/// HELLO capabilities (protocol/handshake.md); a peer announces only what it implements.
public enum Capability {
    /// DECISION `resume` / `completed`, non-zero ITEM_START offsets.
    public static let resume = "resume"
    /// The node is a relay: it takes deposits and COLLECT.
    public static let relay = "relay"
    /// The node, as a receiver, takes direct offers whose items carry no `hash`.
    public static let lateHash = "late-hash"
    /// The node, as a receiver, takes item previews (OFFER `preview`, PREVIEW messages).
    public static let preview = "preview"
    /// The node, as a receiver, takes previews after a direct offer is complete (OFFER item
    /// `latePreview`, PREVIEW messages while the DECISION is awaited).
    public static let latePreview = "late-preview"
}

/// Limits a receiver enforces on offers (protocol/messages.md "Limits").
public struct OfferLimits: Sendable, Equatable {
    public var maxItems: Int = 10_000
    public var maxTotalBytes: Int64 = 64 << 30
    public var maxItemBytes: Int64 = 1 << 32
    public var maxNameBytes: Int = 255

    public init() {}
}
