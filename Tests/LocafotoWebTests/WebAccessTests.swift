import Foundation
import LocafotoTestSupport
import Synchronization
import Testing

@testable import LocafotoWeb

@Suite("Web app logins and sessions")
struct WebAccessTests {
    @Test("a login code opens one session, once; the session is its own secret")
    func codeOnce() throws {
        let access = WebAccess(port: 0)
        let code = access.mintCode()
        #expect(code.count == 43)
        let session = try #require(access.redeem(code))
        #expect(session != code)
        #expect(access.isSession(session))
        #expect(access.redeem(code) == nil)
        #expect(!access.isSession(code))
        access.endSession(session)
        #expect(!access.isSession(session))
    }

    @Test("codes and sessions of another agent, or altered by one character, open nothing")
    func otherSecrets() throws {
        let a = WebAccess(port: 0)
        let b = WebAccess(port: 0)
        let code = a.mintCode()
        #expect(b.redeem(code) == nil)
        var altered = Array(code)
        altered[10] = altered[10] == "A" ? "B" : "A"
        #expect(a.redeem(String(altered)) == nil)
        let session = try #require(a.redeem(code))
        #expect(!b.isSession(session))
    }

    @Test("a code works until its lifetime is over, then opens nothing")
    func expired() {
        let time = ManualClock()
        let access = WebAccess(port: 0, clock: time)
        let early = access.mintCode()
        let late = access.mintCode()
        time.advance(by: WebAccess.codeLifetime)
        #expect(access.redeem(early) != nil, "at its lifetime to the tick, a code still works")
        time.advance(by: .nanoseconds(1))
        #expect(access.redeem(late) == nil)
    }

    @Test("a session ends at its lifetime, and a waiter for it is woken")
    func sessionExpires() async throws {
        let time = ManualClock()
        let access = WebAccess(port: 0, clock: time)
        let session = try #require(access.redeem(access.mintCode()))
        time.advance(by: WebAccess.sessionLifetime)
        #expect(access.isSession(session))
        time.advance(by: .seconds(1))
        #expect(!access.isSession(session))
        await access.untilEnded(session)  // at once: over by the injected time
    }

    @Test("only the newest codes are kept")
    func capped() {
        let access = WebAccess(port: 0)
        let first = access.mintCode()
        for _ in 0..<WebAccess.maxCodes { _ = access.mintCode() }
        #expect(access.redeem(first) == nil)
    }

    @Test("malformed codes: truncated, padded, too long, not base64url, empty")
    func malformed() {
        let access = WebAccess(port: 0)
        let code = access.mintCode()
        for bad in [
            String(code.dropLast()), code + "=", code + "A", String(repeating: "A", count: 100_000),
            String(code.dropLast()) + "+", String(code.dropLast()) + "/", "", "é" + code.dropFirst(2),
            Self.otherSpelling(code),
        ] {
            #expect(WebAccess.decode(bad) == nil, "\(bad.prefix(50))")
            #expect(access.redeem(bad) == nil)
        }
        #expect(access.redeem(code) != nil)
    }

    /// The same 32 bytes with other values in the last character's 2 unused bits.
    static func otherSpelling(_ code: String) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        let last = alphabet.firstIndex(of: code.last!)!
        return String(code.dropLast()) + String(alphabet[last ^ 1])
    }

    @Test("cookie lines: the named cookie among others, spaces, repeats, hostile lines")
    func cookies() {
        #expect(cookieValue("s", in: ["a=1; s=xyz; b=2"]) == "xyz")
        #expect(cookieValue("s", in: ["a=1", "s = xyz "]) == "xyz")
        #expect(cookieValue("s", in: ["ss=1; s=2"]) == "2")
        #expect(cookieValue("s", in: ["s=1; s=2"]) == "1")
        #expect(
            cookieValues("s", in: ["s=1; s=2", "s=3"]) == ["1", "2", "3"],
            "a shadowing cookie does not hide the session")
        #expect(cookieValue("s", in: ["s=a=b"]) == "a=b")
        #expect(cookieValue("s", in: ["s"]) == nil)
        #expect(cookieValue("s", in: [";;;=;s;"]) == nil)
        #expect(cookieValue("s", in: [""]) == nil)
        #expect(cookieValue("s", in: ["s=" + String(repeating: "x", count: 9000)]) == nil)
        #expect(cookieValue("s", in: ["\u{0}s=1"]) == nil)
    }
}

extension WebAccessTests {
    @Test("waiting for a session's end returns on logout, on eviction, and at once for a dead one")
    func untilEnded() async throws {
        let access = WebAccess(port: 0)
        let first = try #require(access.redeem(access.mintCode()))
        let second = try #require(access.redeem(access.mintCode()))
        await access.untilEnded("not a session")  // at once
        access.endSession(second)
        await access.untilEnded(second)  // at once: already over
        // A waiter that started before the logout: the logout wakes it (the wait is the event;
        // nothing here sleeps, and a hang would be caught by the suite's time limit).
        async let waited: Void = access.untilEnded(first)
        while !access.hasWatchers { await Task.yield() }
        access.endSession(first)
        await waited
        // Eviction: the oldest session goes when more than maxSessions log in.
        let oldest = try #require(access.redeem(access.mintCode()))
        async let evicted: Void = access.untilEnded(oldest)
        while !access.hasWatchers { await Task.yield() }
        for _ in 0..<WebAccess.maxSessions { _ = access.redeem(access.mintCode()) }
        await evicted
        #expect(!access.isSession(oldest))
    }
}
