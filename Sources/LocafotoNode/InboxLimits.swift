/// Rate and size limits on incoming offers (protocol/messages.md "Limits").
public struct InboxLimits: Sendable {
    /// Offers from one peer that may wait undecided at the same time.
    public var maxPendingPerPeer = 5
    /// Undecided offers from all untrusted peers together, and their items: one person with
    /// many fresh keys meets these, not only the per-peer limits.
    public var maxPendingUntrusted = 100
    public var maxPendingUntrustedItems = 50_000
    /// Bytes of previews kept for those undecided offers together; an offer that would pass
    /// it is kept without its previews.
    public var maxPendingUntrustedPreviewBytes = 32 << 20
    /// Offers one peer may make per `window`.
    public var maxOffersPerWindow = 30
    public var window: Duration = .seconds(600)
    /// How long an undecided offer waits before it expires.
    public var expiry: Duration = .seconds(3600)
    /// How long the partial items of an interrupted transfer wait for the sender to resume.
    public var resumeWindow: Duration = .seconds(86400)

    public init() {}
}
