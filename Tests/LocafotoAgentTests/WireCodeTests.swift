import LocafotoFormats
import LocafotoNode
import LocafotoRelay
import LocafotoVault
import LocafotoWire
import Testing

/// What a peer is told for an error of this node (`WireError(_:local:)`): the one mapping.
@Suite("Errors as a peer sees them")
struct WireCodeTests {
    @Test("a wire or relay error keeps its code; a refused photo says so; a failure of this node, what it did")
    func mapping() {
        let wire = WireError(.hashMismatch, "the hash differs")
        #expect(WireError(wire, local: .storageFailed) == wire)
        let relay = RelayError(.refused, .rateLimited, "too many deposits")
        #expect(WireError(relay, local: .internalError) == WireError(.rateLimited, "too many deposits"))
        let notAPhoto = AgentError(VaultError(.unsupportedContent, "not a supported image"))
        #expect(WireError(notAPhoto, local: .storageFailed).code == .unsupportedContent)
        let disk = AgentError(VaultError(.io, "disk full"))
        #expect(WireError(disk, local: .storageFailed) == WireError(.storageFailed, "disk full"))
        #expect(WireError(AgentError(.internalError, "a bug"), local: .internalError).code == .internalError)
    }

    @Test("bundle fields that fail their checks get the codes of the step that found them")
    func steps() {
        #expect(WireError.itemStart(FormatError(.wrongRecipient, "x")).code == .decryptFailed)
        #expect(WireError.itemStart(FormatError(.tooLarge, "x")).code == .protocolViolation)
        #expect(WireError.itemEnd(FormatError(.tagMismatch, "x")).code == .decryptFailed)
        #expect(WireError.itemEnd(FormatError(.malformed, "x")).code == .badSignature)
    }
}
