import CDBus
import Foundation
import Synchronization

/// What systemd-logind tells about the machine and the user's session.
public enum LogindSignal: Sendable, Equatable {
    /// `org.freedesktop.login1.Manager.PrepareForSleep(b)`: true before suspend/hibernate,
    /// false after resume.
    case prepareForSleep(Bool)
    /// `org.freedesktop.login1.Session.Lock` of the session at `path` (the screen locker is asked
    /// to lock it).
    case sessionLock(path: String)
}

/// Follows logind's `PrepareForSleep` and a session's `Lock` signals on the system bus, through
/// libdbus like `NotificationClient` (one private `BusConnection`), and hands them to `signals`.
///
/// Only signals sent by the owner of `org.freedesktop.login1` are delivered (the match rules name
/// it as sender: the bus checks who sent a signal, so another local process cannot forge one).
public final class LogindWatcher: @unchecked Sendable {
    static let service = "org.freedesktop.login1"
    static let managerPath = "/org/freedesktop/login1"

    private let bus: BusConnection
    public let signals: AsyncStream<LogindSignal>
    /// The session whose `Lock` is followed; nil: every session's.
    public let sessionPath: String?

    /// The system bus: DBUS_SYSTEM_BUS_ADDRESS (the standard override, which the tests use for a
    /// private bus), else the standard socket. The session is XDG_SESSION_ID's; without one (an
    /// agent started outside a login session, e.g. as a service) every session's `Lock` counts,
    /// which errs on the side of locking.
    public static func system(environment: [String: String] = ProcessInfo.processInfo.environment) throws
        -> LogindWatcher
    {
        let address =
            environment["DBUS_SYSTEM_BUS_ADDRESS"].flatMap { $0.isEmpty ? nil : $0 }
            ?? "unix:path=/run/dbus/system_bus_socket"
        let session = environment["XDG_SESSION_ID"].flatMap { $0.isEmpty ? nil : $0 }
        return try LogindWatcher(address: address, sessionPath: session.map(Self.sessionPath(id:)))
    }

    /// logind's object path of session `id` (sd_bus_path_encode: bytes outside `[A-Za-z0-9]`, and
    /// a leading digit, become `_xx` in lowercase hex): "2" → `/org/freedesktop/login1/session/_32`.
    public static func sessionPath(id: String) -> String {
        var out = ""
        for (i, b) in id.utf8.enumerated() {
            let alpha = (0x41...0x5A).contains(b) || (0x61...0x7A).contains(b)
            let digit = (0x30...0x39).contains(b)
            if alpha || (digit && i > 0) {
                out.append(Character(UnicodeScalar(b)))
            } else {
                out += "_" + String(format: "%02x", b)
            }
        }
        return "/org/freedesktop/login1/session/" + out
    }

    init(address: String, sessionPath: String?) throws {
        self.sessionPath = sessionPath
        var lockRule = "type='signal',sender='\(Self.service)',interface='org.freedesktop.login1.Session',member='Lock'"
        if let sessionPath { lockRule += ",path='\(sessionPath)'" }
        let (signals, continuation) = AsyncStream.makeStream(
            of: LogindSignal.self, bufferingPolicy: .bufferingNewest(64))
        self.signals = signals
        // Confirmed rules: once this returns, no signal they match can be missed.
        bus = try BusConnection(
            address: address, bus: "system bus",
            matches: [
                "type='signal',sender='\(Self.service)',path='\(Self.managerPath)',interface='org.freedesktop.login1.Manager',member='PrepareForSleep'",
                lockRule,
            ],
            confirmed: true, threadName: "locafoto-logind",
            onSignal: { Self.decode($0).map { _ = continuation.yield($0) } }, onEnd: { continuation.finish() })
    }

    /// Ends the reader thread and the connection; `signals` finishes.
    public func stop() { bus.stop() }

    /// The logind signal in `m`, if it is one of those this watcher follows.
    private static func decode(_ m: OpaquePointer) -> LogindSignal? {
        if dbus_message_is_signal(m, "org.freedesktop.login1.Manager", "PrepareForSleep") != 0 {
            var it = DBusMessageIter()
            guard dbus_message_iter_init(m, &it) != 0,
                dbus_message_iter_get_arg_type(&it) == NotificationClient.type("b")
            else { return nil }
            var v: dbus_bool_t = 0
            dbus_message_iter_get_basic(&it, &v)
            return .prepareForSleep(v != 0)
        }
        if dbus_message_is_signal(m, "org.freedesktop.login1.Session", "Lock") != 0 {
            return .sessionLock(path: dbus_message_get_path(m).map { String(cString: $0) } ?? "")
        }
        return nil
    }
}
