import LocafotoErrors
import LocafotoFormats

/// An error that says what it is to a peer: the wire code it is sent with (ERROR, DECISION,
/// ITEM_RESULT), or nil for a failure of this node's own (a disk, a bug), which goes out as the
/// code of what the node was doing. Each layer's error type conforms in its own module; the
/// mapping of a layer's codes sits beside that layer's error.
public protocol WireCoded: Error {
    var wireCode: WireErrorCode? { get }
}

extension WireError: WireCoded {
    public var wireCode: WireErrorCode? { code }
}

/// A photo's bundle fields that fail their checks, by the step that found it: the protocol
/// gives each step its own codes.
extension WireError {
    /// ITEM_START content this node cannot use (messages.md "ITEM_START"): `decrypt_failed` for
    /// a key not sealed to it, `protocol_violation` for the rest.
    public static func itemStart(_ e: FormatError) -> WireError {
        WireError(e.code == .wrongRecipient ? .decryptFailed : .protocolViolation, e.message)
    }

    /// An ITEM_END that does not verify (messages.md "ITEM_END"): `decrypt_failed` for an AEAD
    /// tag that fails, `bad_signature` for the rest, a tag or signature of the wrong length
    /// included.
    public static func itemEnd(_ e: FormatError) -> WireError {
        WireError(e.code == .tagMismatch ? .decryptFailed : .badSignature, e.message)
    }
}

extension WireError {
    /// `error` as a peer is told it: with its own wire code when it has one, else (this node's
    /// own failure) with `local`, the code of what the node was doing (storageFailed while it
    /// stored an item). The one place an error of this node becomes a wire error.
    public init(_ error: any Error, local: WireErrorCode) {
        if let e = error as? WireError {
            self = e
            return
        }
        let code = (error as? any WireCoded)?.wireCode ?? local
        // Its message, not its log line: the causes behind it (paths, errno, SQLite) stay here.
        self.init(code, (error as? any ExplainedError)?.message ?? "\(error)")
    }
}
