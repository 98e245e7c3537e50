import Foundation
import LocafotoErrors

// What the control API answers, as the agent encodes it and the CLI (and tests) decode it
// (protocol/control-api.md). Field names are the JSON keys; dates are RFC 3339.

/// Whether the node has a vault, and whether it is open.
public enum VaultLockState: String, NamedChoice {
    case absent, locked, unlocked
}

/// `GET /v1/status`.
public struct NodeStatus: Codable, Sendable, Equatable {
    /// `node`, or `relay` for `locafoto relay`.
    public enum Role: String, NamedChoice {
        case node, relay
    }

    public var name: String
    public var fingerprint: String
    public var port: Int
    public var vault: VaultLockState
    public var discovery: String
    public var policy: ReceivePolicy
    public var home: String
    public var pendingOffers: Int
    /// The wire protocol version.
    public var version: Int
    public var role: Role
    /// The relays this node uses (`--relay`).
    public var relays: [String]
    /// The web app's address (`http://127.0.0.1:PORT/`, no secret in it); absent without one.
    public var web: String?
    /// Photos in the vault (hidden ones included; a locked private album's not) and the sizes of
    /// their originals and of their encrypted files; absent while the vault is locked or absent.
    public var photoCount: Int?
    public var originalBytes: Int64?
    public var encryptedBytes: Int64?
    /// How identity.json keeps the node's private key: `clear` or `vault` (wrapped under the
    /// vault's master key: `locafoto identity protect`).
    public var identity: String?
    /// `agent --auto-lock`, in seconds; absent when off.
    public var autoLockSeconds: Int?
    /// Whether the vault locks when the machine suspends or the session locks.
    public var lockOnSleep: Bool?

    public init(
        name: String, fingerprint: String, port: Int, vault: VaultLockState, discovery: String, policy: ReceivePolicy,
        home: String,
        pendingOffers: Int, version: Int, role: Role, relays: [String], web: String? = nil
    ) {
        self.web = web
        self.name = name
        self.fingerprint = fingerprint
        self.port = port
        self.vault = vault
        self.discovery = discovery
        self.policy = policy
        self.home = home
        self.pendingOffers = pendingOffers
        self.version = version
        self.role = role
        self.relays = relays
    }
}

/// `GET /v1/id`.
public struct NodeID: Codable, Sendable, Equatable {
    public var name: String
    public var fingerprint: String
    /// Base64 of the Ed25519 public key.
    public var publicKey: String

    public init(name: String, fingerprint: String, publicKey: String) {
        self.name = name
        self.fingerprint = fingerprint
        self.publicKey = publicKey
    }
}

/// An element of `GET /v1/peers`, and the answer of trust, untrust and forget.
public struct PeerSummary: Codable, Sendable, Equatable {
    public enum Trust: String, NamedChoice {
        /// Never met: no handshake with this key.
        case new
        /// A handshake done.
        case known
        /// Known only as the sender of offers a relay handed on: its key is proven by its offer
        /// signature, its name is the relay's word.
        case relayed
        /// Its offers are accepted at once.
        case trusted
    }

    public var name: String
    public var fingerprint: String
    public var online: Bool
    public var trust: Trust
    public var addresses: [String]
    public var lastSeenAt: Date?
    /// Set when the name belongs to another known peer (a possible impostor).
    public var warning: String?

    public init(
        name: String, fingerprint: String, online: Bool, trust: Trust, addresses: [String], lastSeenAt: Date? = nil,
        warning: String? = nil
    ) {
        self.name = name
        self.fingerprint = fingerprint
        self.online = online
        self.trust = trust
        self.addresses = addresses
        self.lastSeenAt = lastSeenAt
        self.warning = warning
    }
}

/// `POST /v1/inbox/{id}/accept` and `…/reject`.
public struct OfferDecision: Codable, Sendable, Equatable {
    public var offer: String
    /// `accepted`, `interrupted` (accepted while the sender is away), `rejected`, `cancelled`.
    public var state: String
    public var message: String

    public init(offer: String, state: String, message: String) {
        self.offer = offer
        self.state = state
        self.message = message
    }
}

/// `POST /v1/peers/{peer}/pair` and the elements of `GET /v1/pairing`.
public struct PairingCode: Codable, Sendable, Equatable {
    public var fingerprint: String
    public var name: String
    /// Six digits, shown as "123 456".
    public var code: String
    /// When the handshake the code comes from took place.
    public var handshakeAt: Date

    public init(fingerprint: String, name: String, code: String, handshakeAt: Date) {
        self.fingerprint = fingerprint
        self.name = name
        self.code = code
        self.handshakeAt = handshakeAt
    }
}

/// The JSON coders both sides use: RFC 3339 dates.
public enum ControlCoding {
    /// How the agent writes its answers (the CLI re-encodes a typed answer the same way).
    public static func encoder() -> JSONEncoder {
        let e = JSONEncoder()
        e.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        e.dateEncodingStrategy = .iso8601
        return e
    }

    public static func decoder() -> JSONDecoder {
        let d = JSONDecoder()
        d.dateDecodingStrategy = .iso8601
        return d
    }
}

/// `{"error": {"code", "message"}}`: every error answer of the control API, and what
/// `locafoto --json` prints on stdout for an error.
public struct ErrorAnswer: Codable, Sendable, Equatable {
    public struct Body: Codable, Sendable, Equatable {
        public var code: ErrorCode
        public var message: String
        public init(code: ErrorCode, message: String) {
            self.code = code
            self.message = message
        }
    }
    public var error: Body
    public init(code: ErrorCode, message: String) { error = Body(code: code, message: message) }
}

/// `POST /v1/web/login` (control socket only): a one-time address that opens a web app session.
public struct WebLogin: Codable, Sendable, Equatable {
    /// `http://127.0.0.1:PORT/login?code=…`: a secret until used or expired.
    public var url: String
    /// Seconds the code stays valid.
    public var expiresAt: Date
    public init(url: String, expiresAt: Date) {
        self.url = url
        self.expiresAt = expiresAt
    }
}

/// `POST /v1/uploads`: a photo held in the agent's memory for `POST /v1/send` (`uploads`).
public struct UploadedPhoto: Codable, Sendable, Equatable {
    public var id: String
    public var name: String
    /// The sniffed type (jpeg, png, …).
    public var kind: String
    public var bytes: Int64
    public init(id: String, name: String, kind: String, bytes: Int64) {
        self.id = id
        self.name = name
        self.kind = kind
        self.bytes = bytes
    }
}
