/// A peer as every answer and event names it: `{name, fingerprint}` (control-api.md, "Names").
/// `fingerprint` is absent only where no handshake has told it yet (a transfer to an address
/// that is still connecting).
public struct PeerRef: Codable, Sendable, Equatable, Hashable {
    public var name: String
    public var fingerprint: String?

    public init(name: String, fingerprint: String?) {
        self.name = name
        self.fingerprint = fingerprint
    }
}
