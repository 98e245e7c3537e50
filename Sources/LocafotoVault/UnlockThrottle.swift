import Foundation
import GRDB
import LocafotoErrors

/// Failed-unlock limiting with exponential backoff (seed 002, "attempt limiting with exponential
/// backoff"), for the vault passphrase and for each private album's passphrase.
///
/// The first `freeFailures` (3) consecutive wrong passphrases cost nothing; after n ≥ 3 of them
/// the next attempt must wait 2^(n-3) seconds after the last failure (1 s, 2 s, 4 s, ... capped
/// at one hour). An attempt made too early throws `throttled` before any Argon2id work. A correct
/// passphrase resets the count.
///
/// The state lives in the catalog (`unlockAttempt` for the vault, `album.failedUnlocks` /
/// `album.lastFailedUnlock` for private albums), so it survives restarts; it is not secret and
/// is written while the vault is locked. Each attempt is counted as a failure *before* the key
/// derivation starts (in an IMMEDIATE transaction, so concurrent attempts — other threads or
/// processes — see it), and only a correct passphrase takes it back: killing the process during
/// Argon2id does not save an attempt. Errors that are not a wrong passphrase (I/O, a damaged
/// record) give the attempt back.
///
/// This limits guessing through this code (the agent's control API, the CLI). Someone holding a
/// copy of the catalog can run Argon2id offline: the passphrase strength is the real defence.
enum UnlockThrottle {
    static let freeFailures = 3
    static let maxDelay: TimeInterval = 3600

    /// Seconds to wait after the last of `failures` consecutive failures.
    static func delay(afterFailures failures: Int) -> TimeInterval {
        guard failures >= freeFailures else { return 0 }
        return min(Double(1 << min(failures - freeFailures, 12)), maxDelay)
    }

    /// Seconds still to wait at `now`; 0 when an attempt is allowed.
    static func remaining(failures: Int, lastFailure: Date?, now: Date) -> TimeInterval {
        let wait = delay(afterFailures: failures)
        guard wait > 0, let last = lastFailure else { return 0 }
        // A clock set back makes `now - last` negative: wait at most the full delay, never longer.
        let elapsed = max(0, now.timeIntervalSince(last))
        return max(0, wait - elapsed)
    }

    /// "1 second", "17 seconds", "2 minutes 8 seconds", "1 hour".
    static func describe(_ seconds: TimeInterval) -> String {
        let s = Int(seconds.rounded(.up))
        func unit(_ n: Int, _ name: String) -> String { "\(n) \(name)\(n == 1 ? "" : "s")" }
        if s < 60 { return unit(max(s, 1), "second") }
        if s >= 3600 { return unit(s / 3600, "hour") + (s % 3600 >= 60 ? " " + unit(s % 3600 / 60, "minute") : "") }
        return unit(s / 60, "minute") + (s % 60 > 0 ? " " + unit(s % 60, "second") : "")
    }
}

/// Whose passphrase is being tried.
enum UnlockSubject {
    case vault
    case album(id: String, name: String)
}

enum UnlockOutcome {
    /// The passphrase was right: the count resets.
    case success
    /// The passphrase was wrong: the attempt stays counted.
    case wrongPassphrase
    /// Something else failed (I/O, damaged record): the attempt is given back.
    case inconclusive
}

extension Vault {
    /// Seconds before the next vault unlock attempt is allowed (0: now). Works while locked.
    public func unlockDelay() throws -> TimeInterval {
        let now = hooks.now()
        return try readCatalog { db in
            let (failures, last) = try Self.throttleState(db, .vault)
            return UnlockThrottle.remaining(failures: failures, lastFailure: last, now: now)
        }
    }

    /// Consecutive failed vault unlocks so far (reset by a successful unlock). Works while locked.
    public func failedUnlockCount() throws -> Int {
        try readCatalog { db in try Self.throttleState(db, .vault).failures }
    }

    static func throttleState(_ db: Database, _ subject: UnlockSubject) throws -> (failures: Int, last: Date?) {
        switch subject {
        case .vault:
            guard let row = try Row.fetchOne(db, sql: "SELECT failures, lastFailure FROM unlockAttempt WHERE id = 1")
            else { return (0, nil) }
            return (row["failures"], row["lastFailure"])
        case .album(let id, let name):
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT failedUnlocks, lastFailedUnlock FROM album WHERE id = ?", arguments: [id])
            else { throw VaultError(.albumNotFound, "the album \"\(name)\" was deleted meanwhile") }
            return (row["failedUnlocks"], row["lastFailedUnlock"])
        }
    }

    private static func recordFailures(_ db: Database, _ subject: UnlockSubject, _ failures: Int, _ last: Date?) throws
    {
        switch subject {
        case .vault:
            try db.execute(
                sql: "INSERT OR REPLACE INTO unlockAttempt (id, failures, lastFailure) VALUES (1, ?, ?)",
                arguments: [failures, last])
        case .album(let id, _):
            try db.execute(
                sql: "UPDATE album SET failedUnlocks = ?, lastFailedUnlock = ? WHERE id = ?",
                arguments: [failures, last, id])
        }
    }

    /// Throws `throttled` when an attempt is not allowed yet; otherwise counts this attempt as a
    /// failure (undone by `endUnlockAttempt` unless the passphrase was wrong).
    func beginUnlockAttempt(_ subject: UnlockSubject) throws {
        let now = hooks.now()
        do {
            var refused: VaultError?
            try db.writeWithoutTransaction { db in
                try db.inTransaction(.immediate) {
                    let (failures, last) = try Self.throttleState(db, subject)
                    let wait = UnlockThrottle.remaining(failures: failures, lastFailure: last, now: now)
                    if wait > 0 {
                        // Clock set back: restart the wait from now so it ends after `delay` seconds.
                        if let last, last > now { try Self.recordFailures(db, subject, failures, now) }
                        refused = Self.throttledError(subject, failures: failures, wait: wait)
                    } else {
                        try Self.recordFailures(db, subject, failures + 1, now)
                    }
                    return .commit
                }
            }
            if let refused { throw refused }
        } catch let e as VaultError {
            throw e
        } catch {
            throw VaultError.wrap(error, "could not record the unlock attempt in the vault catalog")
        }
    }

    /// Settles the attempt started by `beginUnlockAttempt`. Best effort: if this write fails,
    /// the attempt stays counted as a failure.
    func endUnlockAttempt(_ subject: UnlockSubject, _ outcome: UnlockOutcome) {
        let now = hooks.now()
        try? db.write { db in
            let (failures, last) = try Self.throttleState(db, subject)
            switch outcome {
            case .success:
                try Self.recordFailures(db, subject, 0, nil)
            case .wrongPassphrase:
                // The wait starts when the failure is known, after the slow key derivation.
                try Self.recordFailures(db, subject, failures, now)
            case .inconclusive:
                try Self.recordFailures(db, subject, max(0, failures - 1), last)
            }
        }
    }

    private static func throttledError(_ subject: UnlockSubject, failures: Int, wait: TimeInterval) -> VaultError {
        let what: String
        switch subject {
        case .vault: what = "the vault"
        case .album(_, let name): what = "the private album \"\(name)\""
        }
        return VaultError(
            .throttled,
            "too many wrong passphrases for \(what) (\(failures) in a row): wait \(UnlockThrottle.describe(wait)) "
                + "before the next attempt; each further wrong passphrase doubles the wait, up to 1 hour")
    }
}
