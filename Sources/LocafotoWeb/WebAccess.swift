import Foundation
import LocafotoClock
import LocafotoCrypto
import Synchronization

/// Who may use the web app (`agent --web-port`): a browser logs in with a one-time login code
/// and then holds a session cookie. Both live in this process's memory only: nothing is written
/// to disk, and a restart of the agent logs every browser out.
///
/// Login codes are minted on the control socket (`POST /v1/web/login`, what `locafoto web`
/// calls), so only the user who owns the socket can get one. A code works once and for
/// `codeLifetime`: a login URL that ends up in a browser's history, a terminal's scrollback or
/// the argument list of `xdg-open` is dead once used.
public final class WebAccess: Sendable {
    public static let codeLifetime: Duration = .seconds(120)
    /// Caps on what is held: the oldest code or session goes first.
    public static let maxCodes = 16
    public static let maxSessions = 64
    /// A session ends this long after its login at the latest (logging out ends it sooner).
    public static let sessionLifetime: Duration = .seconds(12 * 3600)
    /// Secrets are 32 random bytes, 43 characters of base64url.
    public static let secretBytes = 32

    /// The port asked for (`--web-port`; 0: any free one).
    public let requestedPort: Int
    /// The port listened on, once bound (0 before).
    public let boundPort = Mutex<Int>(0)
    private let state = Mutex<State>(State())

    private struct Secret {
        var value: [UInt8]
        var expires: ContinuousClock.Instant?
    }

    private struct State {
        var codes: [Secret] = []
        var sessions: [Secret] = []
        /// Who waits for a session to end (its event streams), by waiter.
        var watchers: [UUID: (session: [UInt8], continuation: CheckedContinuation<Void, Never>)] = [:]

        /// Removes sessions past their time; wakes whoever waits for them.
        mutating func dropExpired(now: ContinuousClock.Instant) {
            for s in sessions where s.expires.map({ $0 < now }) ?? false { wake(s.value) }
            sessions.removeAll { $0.expires.map { $0 < now } ?? false }
        }

        mutating func wake(_ session: [UInt8]) {
            for (id, w) in watchers where constantTimeEquals(w.session, session) {
                watchers.removeValue(forKey: id)
                w.continuation.resume()
            }
        }
    }

    /// The time that codes and sessions expire by (tests move their own instead of shortening
    /// the lifetimes).
    private let clock: any AgentClock

    public init(port: Int, clock: any AgentClock = SystemClock()) {
        requestedPort = port
        self.clock = clock
    }

    public var port: Int { boundPort.withLock { $0 } }

    /// The app's address, without any secret; nil until it listens.
    public var baseURL: String? {
        let p = port
        return p > 0 ? "http://127.0.0.1:\(p)/" : nil
    }

    /// The cookie's name carries the port: cookies are not kept apart by port, and two agents
    /// of one user (two homes) must not log each other out.
    public var cookieName: String { "locafoto-\(port)" }

    /// A fresh one-time login code.
    public func mintCode() -> String {
        let code = SecureRandom.bytes(Self.secretBytes)
        let t = clock.now
        state.withLock { s in
            s.codes.removeAll { $0.expires.map { $0 < t } ?? true }
            if s.codes.count >= Self.maxCodes { s.codes.removeFirst() }
            s.codes.append(Secret(value: code, expires: t + Self.codeLifetime))
        }
        return Self.encode(code)
    }

    /// Uses up `code` and opens a session: the cookie's value, or nil for a code that is
    /// unknown, used or expired.
    public func redeem(_ code: String) -> String? {
        guard let bytes = Self.decode(code) else { return nil }
        let t = clock.now
        return state.withLock { s -> String? in
            s.codes.removeAll { $0.expires.map { $0 < t } ?? true }
            guard let i = Self.match(bytes, in: s.codes) else { return nil }
            s.codes.remove(at: i)
            let session = SecureRandom.bytes(Self.secretBytes)
            s.dropExpired(now: t)
            if s.sessions.count >= Self.maxSessions { s.wake(s.sessions.removeFirst().value) }
            s.sessions.append(Secret(value: session, expires: t + Self.sessionLifetime))
            return Self.encode(session)
        }
    }

    public func isSession(_ value: String) -> Bool {
        guard let bytes = Self.decode(value) else { return false }
        let t = clock.now
        return state.withLock { s in
            s.dropExpired(now: t)
            return Self.match(bytes, in: s.sessions) != nil
        }
    }

    public func endSession(_ value: String) {
        guard let bytes = Self.decode(value) else { return }
        state.withLock { s in
            if let i = Self.match(bytes, in: s.sessions) { s.wake(s.sessions.remove(at: i).value) }
        }
    }

    /// Someone waits for a session's end (tests wait for this before ending one).
    public var hasWatchers: Bool { state.withLock { !$0.watchers.isEmpty } }

    /// Returns when the session ends: logged out, evicted by newer ones, or past its time (at
    /// once when it is not live, or when the waiting task is cancelled).
    public func untilEnded(_ value: String) async {
        guard let bytes = Self.decode(value) else { return }
        let id = UUID()
        let expires = state.withLock { s in Self.match(bytes, in: s.sessions).flatMap { s.sessions[$0].expires } }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withTaskCancellationHandler {
                    await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                        self.state.withLock { s in
                            // Cancelled before it could wait, or already over: no wait at all.
                            guard !Task.isCancelled, Self.match(bytes, in: s.sessions) != nil else { return c.resume() }
                            s.watchers[id] = (bytes, c)
                        }
                    }
                } onCancel: {
                    self.state.withLock { $0.watchers.removeValue(forKey: id) }?.continuation.resume()
                }
            }
            if let expires {
                group.addTask { [clock] in try? await clock.sleep(until: expires) }
            }
            await group.next()
            group.cancelAll()
        }
    }

    /// Compares with every secret in constant time, without stopping at a match: how long it
    /// takes says nothing about how close a guess was, nor which secret it matched.
    private static func match(_ candidate: [UInt8], in secrets: [Secret]) -> Int? {
        var found: Int?
        for (i, s) in secrets.enumerated() where constantTimeEquals(s.value, candidate) {
            found = i
        }
        return found
    }

    public static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(
            of: "/", with: "_"
        )
        .replacingOccurrences(of: "=", with: "")
    }

    /// Exactly `secretBytes` bytes of unpadded base64url, else nil (anything longer is refused
    /// before it is decoded).
    public static func decode(_ text: String) -> [UInt8]? {
        guard text.utf8.count == 43, text.utf8.allSatisfy({ isBase64URL($0) }) else { return nil }
        let standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/") + "="
        guard let data = Data(base64Encoded: standard), data.count == secretBytes else { return nil }
        // The last character carries 2 unused bits: only the canonical spelling is a code
        // (found by fuzz-web-login).
        let bytes = [UInt8](data)
        return encode(bytes) == text ? bytes : nil
    }

    private static func isBase64URL(_ c: UInt8) -> Bool {
        (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || (c >= 0x30 && c <= 0x39) || c == 0x2D || c == 0x5F
    }
}

/// The value of one cookie in `Cookie` header lines (`a=1; b=2`), or nil. Lines over 8 KiB
/// are ignored whole: a browser sends far less to this app.
public func cookieValue(_ name: String, in lines: [String]) -> String? {
    cookieValues(name, in: lines).first
}

/// Every value of a cookie name, in the order sent: a page of another port on 127.0.0.1 (the
/// same site to a browser) can set a cookie of the same name that is sent first, so a check
/// must look at each, not only at the first.
public func cookieValues(_ name: String, in lines: [String]) -> [String] {
    var out: [String] = []
    for line in lines where line.utf8.count <= 8192 {
        for part in line.split(separator: ";", omittingEmptySubsequences: true) {
            let pair = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces) == name else { continue }
            out.append(pair[1].trimmingCharacters(in: .whitespaces))
            if out.count == 8 { return out }  // a browser sends one or two
        }
    }
    return out
}
