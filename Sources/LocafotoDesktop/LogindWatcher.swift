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
/// libdbus like `NotificationClient`: one private connection, a reader thread that wakes when the
/// bus socket has data (poll, no timer) and hands the signals to `signals`.
///
/// Only signals sent by the owner of `org.freedesktop.login1` are delivered (the match rules name
/// it as sender: the bus checks who sent a signal, so another local process cannot forge one).
public final class LogindWatcher: @unchecked Sendable {
    static let service = "org.freedesktop.login1"
    static let managerPath = "/org/freedesktop/login1"

    private let connection: OpaquePointer
    private let lock = NSLock()
    private let continuation: AsyncStream<LogindSignal>.Continuation
    public let signals: AsyncStream<LogindSignal>
    private let wake: (read: Int32, write: Int32)
    private let stopped = Mutex(false)
    /// The session whose `Lock` is followed; nil: every session's.
    public let sessionPath: String?

    /// The system bus: DBUS_SYSTEM_BUS_ADDRESS (the standard override, which the tests use for a
    /// private bus), else the standard socket. The session is XDG_SESSION_ID's; without one (an
    /// agent started outside a login session, e.g. as a service) every session's `Lock` counts,
    /// which errs on the side of locking.
    public static func system(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> LogindWatcher {
        let address = environment["DBUS_SYSTEM_BUS_ADDRESS"].flatMap { $0.isEmpty ? nil : $0 }
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
        _ = Self.threadsReady
        self.sessionPath = sessionPath
        var error = DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        guard let c = dbus_connection_open_private(address, &error) else {
            throw DesktopError("cannot connect to the system bus at \(address): \(NotificationClient.text(error))")
        }
        dbus_connection_set_exit_on_disconnect(c, 0)
        guard dbus_bus_register(c, &error) != 0 else {
            dbus_connection_close(c)
            dbus_connection_unref(c)
            throw DesktopError("the system bus refused this client: \(NotificationClient.text(error))")
        }
        var rules = [
            "type='signal',sender='\(Self.service)',path='\(Self.managerPath)',interface='org.freedesktop.login1.Manager',member='PrepareForSleep'"
        ]
        var lockRule = "type='signal',sender='\(Self.service)',interface='org.freedesktop.login1.Session',member='Lock'"
        if let sessionPath { lockRule += ",path='\(sessionPath)'" }
        rules.append(lockRule)
        for rule in rules {
            // With an error argument libdbus waits for the bus to confirm: once this returns,
            // no signal the rule matches can be missed.
            dbus_bus_add_match(c, rule, &error)
            if dbus_error_is_set(&error) != 0 {
                let why = NotificationClient.text(error)
                dbus_connection_close(c)
                dbus_connection_unref(c)
                throw DesktopError("the system bus refused to deliver logind's signals: \(why)")
            }
        }
        connection = c
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw DesktopError("cannot create a pipe: \(String(cString: strerror(errno)))") }
        wake = (fds[0], fds[1])
        (signals, continuation) = AsyncStream.makeStream(of: LogindSignal.self, bufferingPolicy: .bufferingNewest(64))
        let thread = Thread { [self] in readLoop() }
        thread.name = "locafoto-logind"
        thread.start()
    }

    private static let threadsReady: Void = { _ = dbus_threads_init_default() }()

    /// Ends the reader thread and the connection; `signals` finishes.
    public func stop() {
        stopped.withLock { s in
            guard !s else { return }
            s = true
            var b: UInt8 = 1
            _ = write(wake.write, &b, 1)
        }
    }

    private func readLoop() {
        let fd: Int32 = {
            var fd: Int32 = -1
            lock.lock()
            defer { lock.unlock() }
            return dbus_connection_get_unix_fd(connection, &fd) != 0 ? fd : -1
        }()
        var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)]
        while !stopped.withLock({ $0 }) {
            fds[0].revents = 0
            fds[1].revents = 0
            if poll(&fds, 2, -1) < 0 {
                if errno == EINTR { continue }
                break
            }
            if fds[1].revents != 0 { break }
            lock.lock()
            let open = dbus_connection_read_write(connection, 0) != 0
            drainMessages()
            lock.unlock()
            if !open || fds[0].revents & Int16(POLLHUP | POLLERR) != 0 { break }
        }
        lock.lock()
        dbus_connection_close(connection)
        dbus_connection_unref(connection)
        lock.unlock()
        stopped.withLock { s in
            s = true
            Glibc.close(wake.write)
        }
        Glibc.close(wake.read)
        continuation.finish()
    }

    private func drainMessages() {
        while let m = dbus_connection_pop_message(connection) {
            defer { dbus_message_unref(m) }
            guard dbus_message_get_type(m) == DBUS_MESSAGE_TYPE_SIGNAL else { continue }
            if dbus_message_is_signal(m, "org.freedesktop.login1.Manager", "PrepareForSleep") != 0 {
                var it = DBusMessageIter()
                guard dbus_message_iter_init(m, &it) != 0, dbus_message_iter_get_arg_type(&it) == NotificationClient.type("b") else { continue }
                var v: dbus_bool_t = 0
                dbus_message_iter_get_basic(&it, &v)
                continuation.yield(.prepareForSleep(v != 0))
            } else if dbus_message_is_signal(m, "org.freedesktop.login1.Session", "Lock") != 0 {
                let path = dbus_message_get_path(m).map { String(cString: $0) } ?? ""
                continuation.yield(.sessionLock(path: path))
            }
        }
    }
}
