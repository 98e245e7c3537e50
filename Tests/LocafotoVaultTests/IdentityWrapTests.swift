import Foundation
import LocafotoCrypto
import LocafotoErrors
import Testing

@testable import LocafotoVault

/// The identity seed wrapped under the vault master key (identity.json version 2).
@Suite("Identity seed wrapped under the vault")
struct IdentityWrapTests {
    static let seed = SecretBytes(copying: [UInt8](0x20..<0x40))
    static let publicKey = hex("29acbae141bccaf0b22e1a94d34d0bc7361e526d0bfe12c89794bc9322966dd7")

    /// The vector in protocol/formats.md, computed independently with PyNaCl (BLAKE2b with the
    /// crypto_kdf salt/personal layout, then crypto_aead_xchacha20poly1305_ietf_encrypt with the
    /// nonce 0x40..0x57): master key 0x00..0x1f, seed 0x20..0x3f.
    @Test func theFormatsVectorUnwraps() throws {
        let master = SecretBytes(copying: [UInt8](0..<32))
        #expect(
            Vault.identityKEK(master: master).unsafeCopy()
                == hex("1502d54ae60856bcd6a3898d435c922edf1373c8f5483e2ab9be9d9be494e143"))
        let wrapped = hex(
            "404142434445464748494a4b4c4d4e4f5051525354555657ba67de8b2e7120d5f99a09d9420b2b45ea0221de3197fe62211b1c4868046f84c753c5a9abab415ca5d167663acbe2fb"
        )
        let seed = try Vault.unwrapIdentitySeed(wrapped, publicKey: Self.publicKey, master: master)
        #expect(seed.constantTimeEquals(Self.seed))
        // The public key is bound by the aad: the same bytes under another public key do not open.
        var other = Self.publicKey
        other[0] ^= 1
        #expect(throws: VaultError.self) { _ = try Vault.unwrapIdentitySeed(wrapped, publicKey: other, master: master) }
    }

    @Test func roundTripAndTheSeedIsNotInTheWrapping() throws {
        let v = try makeVault(Sandbox())
        let wrapped = try v.wrapIdentitySeed(Self.seed, publicKey: Self.publicKey)
        #expect(wrapped.count == KeyWrap.overhead + 32)
        #expect(!wrapped.containsSubsequence(Self.seed.unsafeCopy()))
        #expect(try v.unwrapIdentitySeed(wrapped, publicKey: Self.publicKey).constantTimeEquals(Self.seed))
        // Random nonce: wrapping twice gives different bytes.
        #expect(try v.wrapIdentitySeed(Self.seed, publicKey: Self.publicKey) != wrapped)
    }

    @Test func anotherVaultsKeyIsRefused() throws {
        let a = try makeVault(Sandbox())
        let b = try makeVault(Sandbox())  // same passphrase, different random master key
        let wrapped = try a.wrapIdentitySeed(Self.seed, publicKey: Self.publicKey)
        #expect(vaultCode { _ = try b.unwrapIdentitySeed(wrapped, publicKey: Self.publicKey) } == .decryptionFailed)
    }

    @Test func aLockedVaultCannotWrapOrUnwrap() throws {
        let v = try makeVault(Sandbox())
        let wrapped = try v.wrapIdentitySeed(Self.seed, publicKey: Self.publicKey)
        v.lock()
        #expect(vaultCode { _ = try v.unwrapIdentitySeed(wrapped, publicKey: Self.publicKey) } == .locked)
        #expect(vaultCode { _ = try v.wrapIdentitySeed(Self.seed, publicKey: Self.publicKey) } == .locked)
    }

    /// `vault passwd` re-wraps the master key and never changes it, so the identity still opens.
    @Test func aPassphraseChangeKeepsTheIdentityReadable() throws {
        let box = Sandbox()
        let v = try makeVault(box)
        let wrapped = try v.wrapIdentitySeed(Self.seed, publicKey: Self.publicKey)
        try v.changePassphrase(old: secret(testPassphrase), new: secret("a new passphrase entirely"))
        let reopened = try Vault.open(at: box.vault)
        try reopened.unlock(passphrase: secret("a new passphrase entirely"))
        #expect(try reopened.unwrapIdentitySeed(wrapped, publicKey: Self.publicKey).constantTimeEquals(Self.seed))
    }
}

private func hex(_ s: String) -> [UInt8] { Hex.decode(s)! }
