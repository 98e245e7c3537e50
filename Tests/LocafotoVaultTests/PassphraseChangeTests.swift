import Foundation
import LocafotoCrypto
import LocafotoFormats
import LocafotoQuery
import Testing

@testable import LocafotoVault

struct InjectedCrash: Error {}

@Suite("Vault: change of passphrase")
struct PassphraseChangeTests {
    static let newPassphrase = "a new and longer passphrase"

    @Test func theNewPassphraseOpensTheSamePhotosAndTheOldOneNoLonger() throws {
        let sandbox = Sandbox()
        let photo: PhotoRecord
        let fileBefore: [UInt8]
        do {
            let vault = try makeVault(sandbox)
            photo = try Org.fixture(vault, "sample.jpg")
            fileBefore = try [UInt8](
                Data(contentsOf: URL(fileURLWithPath: sandbox.vault + "/" + Vault.relativePath(photo.id))))
            try vault.changePassphrase(old: secret(testPassphrase), new: secret(Self.newPassphrase))
            #expect(vault.isUnlocked)  // left as it was
        }
        // Another instance, as after a restart: the catalog holds the new record.
        let vault = try Vault.open(at: sandbox.vault)
        #expect(vaultCode { try vault.unlock(passphrase: secret(testPassphrase)) } == .wrongPassphrase)
        try vault.unlock(passphrase: secret(Self.newPassphrase))
        #expect(try vault.exportData(photo.id) == Fixtures.bytes("sample.jpg"))
        // No photo was re-encrypted: its file is byte for byte what it was.
        let fileAfter = try [UInt8](
            Data(contentsOf: URL(fileURLWithPath: sandbox.vault + "/" + Vault.relativePath(photo.id))))
        #expect(fileAfter == fileBefore)
    }

    @Test func worksWhileLockedAndLeavesTheVaultLocked() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        vault.lock()
        try vault.changePassphrase(old: secret(testPassphrase), new: secret(Self.newPassphrase))
        #expect(!vault.isUnlocked)
        try vault.unlock(passphrase: secret(Self.newPassphrase))
    }

    @Test func aFailureBeforeTheCommitLeavesTheOldPassphraseWorking() throws {
        let sandbox = Sandbox()
        do {
            let vault = try makeVault(sandbox)
            var hooks = vault.hooks
            hooks.beforePassphraseCommit = { throw InjectedCrash() }
            vault.hooks = hooks
            #expect(throws: (any Error).self) {
                try vault.changePassphrase(old: secret(testPassphrase), new: secret(Self.newPassphrase))
            }
        }
        let vault = try Vault.open(at: sandbox.vault)
        #expect(vaultCode { try vault.unlock(passphrase: secret(Self.newPassphrase)) } == .wrongPassphrase)
        try vault.unlock(passphrase: secret(testPassphrase))
    }

    @Test func theOldPassphraseCheckIsThrottled() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let clock = TestClock()
        clock.install(vault)
        for _ in 1...3 {
            #expect(
                vaultCode { try vault.changePassphrase(old: secret("wrong"), new: secret(Self.newPassphrase)) }
                    == .wrongPassphrase)
            clock.advance(0.01)
        }
        #expect(try vault.failedUnlockCount() == 3)
        #expect(clock.derivations.value == 3)  // the new key is never derived for a wrong old passphrase
        // Now refused before any Argon2id, even with the right old passphrase.
        #expect(
            vaultCode { try vault.changePassphrase(old: secret(testPassphrase), new: secret(Self.newPassphrase)) }
                == .throttled)
        #expect(clock.derivations.value == 3)
        clock.advance(1)
        try vault.changePassphrase(old: secret(testPassphrase), new: secret(Self.newPassphrase))
        #expect(try vault.failedUnlockCount() == 0)
        #expect(clock.derivations.value == 5)  // old, then new
    }

    @Test func anEmptyNewPassphraseIsRefused() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        #expect(
            vaultCode { try vault.changePassphrase(old: secret(testPassphrase), new: secret("")) } == .invalidArgument)
    }

    @Test func aPrivateAlbumGetsANewPassphraseAndKeepsItsPhotos() throws {
        let sandbox = Sandbox()
        let photo: PhotoRecord
        do {
            let vault = try makeVault(sandbox)
            photo = try Org.fixture(vault, "sample.png", name: "diary.png")
            try PrivateAlbumTests.makePrivate(vault)
            try vault.addPhotos([photo.id], toAlbum: "Private")
            try vault.lockAlbum("Private")
            #expect(
                vaultCode {
                    try vault.changeAlbumPassphrase("Private", old: secret("wrong"), new: secret("1357"))
                } == .wrongPassphrase)
            try vault.changeAlbumPassphrase("Private", old: secret(PrivateAlbumTests.pin), new: secret("1357"))
            #expect(try vault.album("Private").isLocked)  // left as it was
        }
        let vault = try Vault.open(at: sandbox.vault)
        try vault.unlock(passphrase: secret(testPassphrase))
        #expect(
            vaultCode { try vault.unlockAlbum("Private", passphrase: secret(PrivateAlbumTests.pin)) }
                == .wrongPassphrase)
        try vault.unlockAlbum("Private", passphrase: secret("1357"))
        #expect(try vault.exportData(photo.id) == Fixtures.bytes("sample.png"))
    }

    @Test func aFailedAlbumChangeLeavesTheOldAlbumPassphrase() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        try PrivateAlbumTests.makePrivate(vault)
        try vault.lockAlbum("Private")
        var hooks = vault.hooks
        hooks.beforePassphraseCommit = { throw InjectedCrash() }
        vault.hooks = hooks
        #expect(throws: (any Error).self) {
            try vault.changeAlbumPassphrase("Private", old: secret(PrivateAlbumTests.pin), new: secret("1357"))
        }
        #expect(vaultCode { try vault.unlockAlbum("Private", passphrase: secret("1357")) } == .wrongPassphrase)
        try vault.unlockAlbum("Private", passphrase: secret(PrivateAlbumTests.pin))
    }

    @Test func anAlbumPassphraseChangeIsThrottledAndNeedsAPrivateAlbum() throws {
        let sandbox = Sandbox()
        let vault = try makeVault(sandbox)
        let clock = TestClock()
        clock.install(vault)
        try PrivateAlbumTests.makePrivate(vault)
        try vault.createAlbum(named: "Plain")
        #expect(
            vaultCode { try vault.changeAlbumPassphrase("Plain", old: secret("x"), new: secret("y")) }
                == .invalidArgument)
        let before = clock.derivations.value
        for _ in 1...3 {
            #expect(
                vaultCode { try vault.changeAlbumPassphrase("Private", old: secret("0000"), new: secret("1357")) }
                    == .wrongPassphrase)
            clock.advance(0.01)
        }
        #expect(
            vaultCode {
                try vault.changeAlbumPassphrase("Private", old: secret(PrivateAlbumTests.pin), new: secret("1357"))
            } == .throttled)
        #expect(clock.derivations.value == before + 3)
        vault.lock()
        #expect(
            vaultCode {
                try vault.changeAlbumPassphrase("Private", old: secret(PrivateAlbumTests.pin), new: secret("1357"))
            } == .locked)
    }
}
