import Foundation
import Hummingbird
import LocafotoClock
import LocafotoControl
import LocafotoErrors
import LocafotoLocalSend
import LocafotoLocalSendServer
import LocafotoNode

/// `/v1/localsend`: LocalSend on or off (kept in the settings), its state, and the devices met,
/// with their trust.
package struct LocalSendController: Sendable {
    /// The setting that keeps it on across restarts.
    package static let setting = "localsend"
    /// The PIN LocalSend senders must give, when set (in the agent's store, 0600).
    package static let pinSetting = "localsendPIN"

    let store: AgentStore
    let home: NodeHome
    let switchboard: LocalSendSwitch
    let reception: LocalSendReception
    let clock: any AgentClock
    let alias: @Sendable () -> String

    package func addRoutes(to t: inout RouteTable) {
        t.get("/v1/localsend") { _ in .json(try status()) }
        t.put("/v1/localsend") { r in .json(try await change(ControlJSON.decode(LocalSendSwitchRequest.self, r.body))) }
        for action in TrustChange.allCases {
            t.post("/v1/localsend/devices/:device/\(action.rawValue)") { r in
                .json(try change(try r.parameter("device"), action))
            }
        }
    }

    /// Sets the PIN, then turns it on or off and answers once the server listens, failed, or closed.
    func change(_ r: LocalSendSwitchRequest) async throws -> LocalSendStatus {
        if let pin = r.pin {
            guard pin.isEmpty || (pin.utf8.count <= 32 && pin.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F })) else {
                throw AgentError(
                    .invalidRequest, "a LocalSend PIN is 1 to 32 printable ASCII characters, without spaces")
            }
            try store.setSetting(Self.pinSetting, pin)
            await reception.setPIN(pin.isEmpty ? nil : pin)
        }
        if let on = r.enabled {
            try store.setSetting(Self.setting, on ? "on" : "off")
            switchboard.set(on: on)
            await switchboard.waitUntilSettled(on: on)
        }
        return try status()
    }

    /// The PIN kept in the settings; nil when none is set.
    package static func storedPIN(_ store: AgentStore) -> String? {
        guard let pin = try? store.setting(pinSetting), !pin.isEmpty else { return nil }
        return pin
    }

    func status() throws -> LocalSendStatus {
        let s = switchboard.current
        return LocalSendStatus(
            enabled: s.on, port: s.listeningPort, fingerprint: LocalSendIdentity.existingFingerprint(in: home),
            alias: alias(), problem: s.problem, pinRequired: Self.storedPIN(store) != nil,
            devices: try store.localSendPeers().map {
                LocalSendStatus.Device(
                    fingerprint: $0.fingerprint, alias: $0.alias, deviceModel: $0.deviceModel,
                    deviceType: $0.deviceType,
                    trust: Self.trust($0.trust), lastSeenAt: $0.lastSeen, lastAddress: $0.lastAddress)
            },
            nearby: s.nearby.map {
                LocalSendStatus.Nearby(
                    alias: $0.device.alias, fingerprint: $0.device.fingerprint, address: $0.address,
                    port: $0.device.port,
                    deviceModel: $0.device.deviceModel, deviceType: $0.device.deviceType?.rawValue)
            })
    }

    /// A device heard (on the multicast group, or registering) but not met, named by alias or
    /// fingerprint prefix: recorded, so that it can be trusted before its first offer (under
    /// `policy trusted` no offer of an untrusted device reaches the inbox, where it would be
    /// recorded). The trust binds its certificate's hash: only a sender showing that certificate
    /// is trusted, whatever else claims the name.
    private func heardOnly(_ query: String) throws -> LocalSendPeerRecord? {
        let q = query.uppercased()
        let heard = switchboard.current.nearby.filter {
            let fp = $0.device.fingerprint.uppercased()
            return fp.utf8.count == 64 && fp.allSatisfy(\.isHexDigit)
                && ($0.device.alias == query || (q.count >= 8 && fp.hasPrefix(q)))
        }
        guard heard.count == 1, let h = heard.first else { return nil }
        return try store.recordLocalSendPeer(
            fingerprint: h.device.fingerprint.uppercased(), alias: h.device.alias, deviceModel: h.device.deviceModel,
            deviceType: h.device.deviceType?.rawValue, address: h.address, port: h.device.port, now: clock.date)
    }

    /// A device named by alias or a fingerprint prefix (at least 8 hex digits).
    static func trust(_ trust: LocalSendPeerRecord.Trust) -> LocalSendStatus.Device.Trust {
        switch trust {
        case .known: .known
        case .trusted: .trusted
        }
    }

    func change(_ query: String, _ action: TrustChange) throws -> LocalSendStatus.Device {
        let all = try store.localSendPeers()
        let q = query.uppercased()
        var matches = all.filter {
            $0.alias == query || (q.count >= 8 && $0.fingerprint.hasPrefix(q))
        }
        if matches.isEmpty, action == .trust, let heard = try heardOnly(query) { matches = [heard] }
        guard let device = matches.first else {
            throw AgentError(.notFound, "no LocalSend device '\(query)'; `locafoto localsend` lists them")
        }
        guard matches.count == 1 else {
            throw AgentError(
                .ambiguous,
                "'\(query)' names \(matches.count) devices: \(matches.map { String($0.fingerprint.prefix(16)) }.joined(separator: ", ")); give more of the fingerprint"
            )
        }
        switch action {
        case .trust: _ = try store.setLocalSendTrust(device.fingerprint, .trusted)
        case .untrust: _ = try store.setLocalSendTrust(device.fingerprint, .known)
        case .forget: _ = try store.forgetLocalSendPeer(device.fingerprint)
        }
        let after = try store.localSendPeer(device.fingerprint) ?? device
        return LocalSendStatus.Device(
            fingerprint: after.fingerprint, alias: after.alias, deviceModel: after.deviceModel,
            deviceType: after.deviceType, trust: action == .forget ? .forgotten : Self.trust(after.trust),
            lastSeenAt: after.lastSeen, lastAddress: after.lastAddress)
    }
}
