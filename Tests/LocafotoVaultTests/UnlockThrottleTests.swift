import Foundation
import LocafotoCrypto
import LocafotoErrors
import Testing

@testable import LocafotoVault

/// A settable clock and a count of Argon2id runs, wired into a vault's hooks.
final class TestClock: Sendable {
    let time = LockedBox(Date(timeIntervalSince1970: 1_800_000_000))
    let derivations = LockedBox(0)

    var now: Date { time.value }
    func advance(_ seconds: TimeInterval) { time.mutate { $0 += seconds } }

    func install(_ vault: Vault) {
        var hooks = vault.hooks
        hooks.now = { [time] in time.value }
        hooks.beforeKeyDerivation = { [derivations] in derivations.mutate { $0 += 1 } }
        vault.hooks = hooks
    }
}

@Suite("Vault: failed-unlock limiting")
struct UnlockThrottleTests {
    static let wrong = "not the passphrase"

    @Test func backoffSchedule() {
        #expect((0...3).map { UnlockThrottle.delay(afterFailures: $0) } == [0, 0, 0, 1])
        #expect((4...8).map { UnlockThrottle.delay(afterFailures: $0) } == [2, 4, 8, 16, 32])
        #expect(UnlockThrottle.delay(afterFailures: 14) == 2048)
        #expect(UnlockThrottle.delay(afterFailures: 15) == 3600)
        #expect(UnlockThrottle.delay(afterFailures: 1_000_000) == 3600)
        let t = Date(timeIntervalSince1970: 1000)
        #expect(UnlockThrottle.remaining(failures: 5, lastFailure: t, now: t + 1) == 3)
        #expect(UnlockThrottle.remaining(failures: 5, lastFailure: t, now: t + 4) == 0)
        #expect(UnlockThrottle.remaining(failures: 5, lastFailure: t, now: t - 100) == 4)  // clock set back
        #expect(UnlockThrottle.describe(0.2) == "1 second")
        #expect(UnlockThrottle.describe(17) == "17 seconds")
        #expect(UnlockThrottle.describe(128) == "2 minutes 8 seconds")
        #expect(UnlockThrottle.describe(3600) == "1 hour")
    }

    @Test func threeFreeFailuresThenExponentialWaitsAcrossRestarts() throws {
        let sandbox = Sandbox()
        let clock = TestClock()
        do {
            let vault = try makeVault(sandbox)
            vault.lock()
            clock.install(vault)
            for n in 1...3 {
                #expect(vaultCode { try vault.unlock(passphrase: secret(Self.wrong)) } == .wrongPassphrase)
                #expect(try vault.failedUnlockCount() == n)
                clock.advance(0.01)
            }
            #expect(clock.derivations.value == 3)
            // The 4th attempt needs 1 s after the 3rd failure: refused without Argon2id, even with
            // the right passphrase, and not counted.
            #expect(try vault.unlockDelay() > 0.9)
            let early = #expect(throws: VaultError.self) { try vault.unlock(passphrase: secret(testPassphrase)) }
            #expect(early?.code == .throttled)
            #expect(early?.message.contains("wait 1 second") == true)
            #expect(early?.message.contains("3 in a row") == true)
            #expect(clock.derivations.value == 3)
            #expect(try vault.failedUnlockCount() == 3)
            #expect(!vault.isUnlocked)

            clock.advance(1)
            #expect(try vault.unlockDelay() == 0)
            #expect(vaultCode { try vault.unlock(passphrase: secret(Self.wrong)) } == .wrongPassphrase)
            #expect(clock.derivations.value == 4)
            // After 4 failures: 2 s.
            clock.advance(1.5)
            #expect(vaultCode { try vault.unlock(passphrase: secret(testPassphrase)) } == .throttled)
            #expect(clock.derivations.value == 4)
        }
        // A restart does not reset the count: the state is in the catalog, written while locked.
        let vault = try Vault.open(at: sandbox.vault)
        clock.install(vault)
        #expect(try vault.failedUnlockCount() == 4)
        let again = #expect(throws: VaultError.self) { try vault.unlock(passphrase: secret(testPassphrase)) }
        #expect(again?.code == .throttled && again?.message.contains("1 second") == true)
        #expect(clock.derivations.value == 4)

        // A clock set back does not lock the vault for longer than the delay.
        clock.advance(-86_400)
        #expect(vaultCode { try vault.unlock(passphrase: secret(testPassphrase)) } == .throttled)
        clock.advance(2)
        // Success resets the count: three free failures again.
        try vault.unlock(passphrase: secret(testPassphrase))
        #expect(vault.isUnlocked)
        #expect(try vault.failedUnlockCount() == 0)
        #expect(clock.derivations.value == 5)
        vault.lock()
        for _ in 1...3 {
            #expect(vaultCode { try vault.unlock(passphrase: secret(Self.wrong)) } == .wrongPassphrase)
        }
        #expect(vaultCode { try vault.unlock(passphrase: secret(Self.wrong)) } == .throttled)
        #expect(clock.derivations.value == 8)
    }

    @Test func concurrentAttemptsAreCountedBeforeTheKeyDerivation() async throws {
        // Three failures already; two simultaneous attempts after the wait: one runs Argon2id,
        // the other is refused (the first counted itself before deriving).
        let sandbox = Sandbox()
        let clock = TestClock()
        let vault = try makeVault(sandbox)
        vault.lock()
        clock.install(vault)
        for _ in 1...3 { _ = vaultCode { try vault.unlock(passphrase: secret(Self.wrong)) } }
        clock.advance(1)
        let codes = await withTaskGroup(of: VaultError.Code?.self) { group in
            for _ in 0..<2 {
                group.addTask {
                    do {
                        try vault.unlock(passphrase: secret(Self.wrong))
                        return nil
                    } catch let e as VaultError {
                        return e.code
                    } catch {
                        return nil
                    }
                }
            }
            var out: [VaultError.Code?] = []
            for await c in group { out.append(c) }
            return out
        }
        #expect(codes.filter { $0 == .throttled }.count == 1)
        #expect(codes.filter { $0 == .wrongPassphrase }.count == 1)
        #expect(clock.derivations.value == 4)
        #expect(try vault.failedUnlockCount() == 4)
    }
}
