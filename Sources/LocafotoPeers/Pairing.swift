import Foundation
import LocafotoClock
import LocafotoControl
import LocafotoCrypto
import LocafotoFormats
import LocafotoNode
import LocafotoSession
import Synchronization

/// Short authentication codes (protocol/handshake.md "Pairing code"): both ends of a handshake
/// derive the same 6 digits from the Noise handshake hash; a machine in the middle would have
/// run two handshakes with different hashes, so users who compare the codes (in person, by phone)
/// before `locafoto trust` know they met each other.
public enum PairingCode {
    package static let domain = Array("LOCAFOTO-PAIRING-V1".utf8)

    /// BLAKE2b-256(domain ‖ h); the first 4 bytes, big-endian, modulo 10⁶; written "123 456".
    public static func code(handshakeHash h: [UInt8]) -> String {
        var hasher = BLAKE2b(outputLength: 32)
        hasher.update(domain)
        hasher.update(h)
        let d = hasher.finalize()
        let n = (UInt32(d[0]) << 24 | UInt32(d[1]) << 16 | UInt32(d[2]) << 8 | UInt32(d[3])) % 1_000_000
        let s = String(format: "%06u", n)
        return "\(s.prefix(3)) \(s.suffix(3))"
    }
}

/// The code of the latest handshake with each peer, kept for 10 minutes.
package final class PairingBook: Sendable {
    package struct Entry: Codable, Sendable {
        package var fingerprint: String
        package var name: String
        package var code: String
        package var at: Date

        package var answer: LocafotoControl.PairingCode {
            LocafotoControl.PairingCode(fingerprint: fingerprint, name: name, code: code, handshakeAt: at)
        }
    }

    private let entries = Mutex<[String: Entry]>([:])
    package static let lifetime: TimeInterval = 600
    private let clock: any AgentClock

    package init(clock: any AgentClock) {
        self.clock = clock
    }

    package func record(_ peer: PeerIdentity, handshakeHash: [UInt8]) {
        let e = Entry(
            fingerprint: peer.fingerprint.description, name: peer.name,
            code: PairingCode.code(handshakeHash: handshakeHash), at: clock.date)
        entries.withLock { $0[e.fingerprint] = e }
    }

    package var recent: [Entry] {
        let cutoff = clock.date.addingTimeInterval(-Self.lifetime)
        return entries.withLock { all in
            all = all.filter { $0.value.at > cutoff }
            return all.values.sorted { $0.at > $1.at }
        }
    }
}
