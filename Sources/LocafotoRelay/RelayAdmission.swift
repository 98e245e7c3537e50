import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats
import LocafotoWire

/// Who may deposit at this relay. Set from configuration with `parse`, which canonicalises the
/// fingerprints; an `.allowList` built by hand must hold canonical spellings
/// (`Fingerprint.description`), or nobody in it will match.
public enum RelayAdmission: Sendable, Equatable {
    /// Anyone with a valid identity key may deposit (quotas still apply).
    case open
    /// Only these senders (canonical fingerprints) may deposit.
    case allowList(Set<String>)

    /// Builds the admission from configuration: `open` (an explicit choice) or a list of
    /// fingerprints as users type them (any case, dashes or spaces).
    public static func parse(open: Bool, allowed: [String]) throws -> RelayAdmission {
        if open {
            guard allowed.isEmpty else {
                throw RelayError(
                    .configuration, .internalError,
                    "the relay is configured both open and with an allow-list of \(allowed.count) sender(s): choose one (remove the list, or the open setting)"
                )
            }
            return .open
        }
        var set = Set<String>()
        for (i, entry) in allowed.enumerated() {
            do {
                set.insert(try Fingerprint(parsing: entry).description)
            } catch let e as FormatError {
                throw RelayError(
                    .configuration, .internalError,
                    "relay allow-list entry \(i + 1) ('\(entry)') is not a fingerprint: \(e.message). Copy it from `locafoto id` on the sender's machine"
                )
            }
        }
        return .allowList(set)
    }

    /// An empty allow-list refuses every deposit; the agent refuses to start a relay like that.
    public var isRefusingEveryone: Bool {
        if case .allowList(let s) = self { return s.isEmpty }
        return false
    }

    public func admits(fingerprint: String) -> Bool {
        switch self {
        case .open: true
        case .allowList(let s): s.contains(fingerprint)
        }
    }

    /// "open" or "allow-list".
    public var mode: String {
        switch self {
        case .open: "open"
        case .allowList: "allow-list"
        }
    }
}

/// The canonical fingerprint of an Ed25519 public key; throws `invalidDeposit` for a key that is
/// not 32 bytes.
func fingerprint(of key: [UInt8], role: String) throws -> String {
    do {
        return Fingerprint(publicKey: try SigningPublicKey(bytes: key)).description
    } catch {
        throw RelayError(
            .invalidDeposit, .protocolViolation,
            "the \(role) key must be a 32-byte Ed25519 public key (got \(key.count) bytes)")
    }
}
