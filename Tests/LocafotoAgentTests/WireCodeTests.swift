import LocafotoControl
import LocafotoErrors
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

    @Test("an error's log line carries its cause, said once; a peer is told its message only")
    func causes() {
        let disk = VaultError(.io, "could not write in /v", cause: CauseText("No space left on device"))
        #expect("\(disk)" == "could not write in /v (No space left on device)")
        let agent = AgentError(disk)
        #expect(agent.code == .io && "\(agent)" == "could not write in /v (No space left on device)")
        #expect(WireError(agent, local: .storageFailed) == WireError(.storageFailed, "could not write in /v"))
        let told = AgentError(.peerUnavailable, "bob did not answer", cause: CauseText("connection refused"))
        #expect("\(told)" == "bob did not answer (connection refused)")
        // The same error whatever its cause: causes are for the log.
        #expect(disk == VaultError(.io, "could not write in /v"))
        #expect(disk != VaultError(.corrupt, "could not write in /v"))
    }

    @Test("bundle fields that fail their checks get the codes of the step that found them")
    func steps() {
        #expect(WireError.itemStart(FormatError(.wrongRecipient, "x")).code == .decryptFailed)
        #expect(WireError.itemStart(FormatError(.tooLarge, "x")).code == .protocolViolation)
        #expect(WireError.itemEnd(FormatError(.tagMismatch, "x")).code == .decryptFailed)
        #expect(WireError.itemEnd(FormatError(.malformed, "x")).code == .badSignature)
    }
}
