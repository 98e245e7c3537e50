/// Peers of another protocol that `send` reaches beside locafoto peers: LocalSend devices
/// (LocafotoLocalSendServer). The photos are prepared as for any peer (read, checked, sniffed,
/// transformed), then handed to the route, which runs the transfer to its end.
package protocol ForeignSending: Sendable {
    /// The peer `query` names in that protocol; nil when it names none. Throws when it names one
    /// that must not be sent to (a certificate that changed, a device that speaks plain HTTP),
    /// or when the query is marked for that protocol (`localsend:…`) and cannot be sent to.
    func route(_ query: String) throws -> ForeignRoute?

    /// Whether `query` is marked for that protocol, so that no locafoto peer is looked for.
    func claims(_ query: String) -> Bool

    /// What to say when `query` names neither a locafoto peer nor one of this protocol's, while
    /// this protocol is on (nil: off, and the peers' own words stand).
    func notFound(_ query: String) -> String?
}

/// Where a send to a foreign peer goes: the peer as the transfer shows it, and how it is sent.
package struct ForeignRoute: Sendable {
    package var name: String
    package var fingerprint: String?
    /// Runs the transfer to its end (`OutgoingTransfer.finish`), or throws what ended it.
    package var send:
        @Sendable (_ transfer: OutgoingTransfer, _ items: [PreparedItem], _ pin: String?) async throws -> Void

    package init(
        name: String, fingerprint: String?,
        send: @escaping @Sendable (OutgoingTransfer, [PreparedItem], String?) async throws -> Void
    ) {
        self.name = name
        self.fingerprint = fingerprint
        self.send = send
    }
}
