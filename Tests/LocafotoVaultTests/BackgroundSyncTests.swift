import Foundation
import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats
import Testing

@testable import LocafotoVault

/// The fsync a received photo gets on a thread of its own (prepareReceived), waited for by
/// commitReceived before the catalog names it.
@Suite("Vault: fsync beside the transfer")
struct BackgroundSyncTests {
    @Test func waitsForTheFlushAndReportsItsFailure() throws {
        let sandbox = Sandbox()
        let dir = try sandbox.directory("files")
        try Data("bytes".utf8).write(to: URL(fileURLWithPath: dir + "/a"))
        let ok = BackgroundSync(path: dir + "/a")
        try ok.wait()
        try ok.wait()  // again: at once
        let missing = BackgroundSync(path: dir + "/missing")
        let e = #expect(throws: VaultError.self) { try missing.wait() }
        #expect(e?.code == .io)
        #expect(throws: VaultError.self) { try missing.wait() }
    }

    @Test func aPreparedPhotoWhoseFileIsGoneIsNotCommitted() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let spool = try sandbox.directory("spool")
        // A spooled LOCA file as the receiver leaves it: 64 placeholder bytes, ciphertext, tag.
        let plain = try Fixtures.bytes("sample.jpg")
        let path = spool + "/0.part"
        try Data([UInt8](repeating: 0, count: 64 + plain.count + 16)).write(to: URL(fileURLWithPath: path))
        let photo = try vault.prepareReceived(
            spoolPath: path, photoKey: SecretBytes(randomCount: 32), algorithm: .chacha20poly1305,
            nonce: [UInt8](repeating: 1, count: 12),
            originalSize: Int64(plain.count), contentHash: [UInt8](repeating: 2, count: 32), format: .jpeg,
            name: "a.jpg",
            captureDate: nil, width: nil, height: nil, senderFingerprint: nil, senderName: nil)
        // Its file is gone before the commit (whether its flush ran before or after): nothing
        // enters the catalog.
        unlink(photo.source)
        #expect(throws: VaultError.self) { _ = try vault.commitReceived([photo]) }
        #expect(try vault.photos().isEmpty)
    }
}
