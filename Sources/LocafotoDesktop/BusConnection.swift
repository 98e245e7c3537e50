import CDBus
import Foundation
import Synchronization

/// One private libdbus connection and the thread that reads it, shared by `NotificationClient`
/// (session bus) and `LogindWatcher` (system bus). Calls and reading are serialised on one lock;
/// the reader thread wakes when the bus socket has data (poll on its descriptor, no timer) and
/// hands each signal to `onSignal`, under the lock. `stop()` ends the thread and the connection,
/// then `onEnd` runs once. The connection also ends when the bus goes away (the session ends, its
/// bus daemon is stopped); a call after that throws rather than touch the freed connection.
final class BusConnection: @unchecked Sendable {
    private let connection: OpaquePointer
    /// Names the bus in errors ("session bus").
    private let bus: String
    private let lock = NSLock()
    /// True once the reader has closed and released `connection` (under `lock`).
    private var ended = false
    /// Written to end the reader thread's poll.
    private let wake: (read: Int32, write: Int32)
    private let stopped = Mutex(false)
    private let onSignal: (OpaquePointer) -> Void
    private let onEnd: () -> Void

    /// Connects to `address` (`bus`, e.g. "session bus", names it in errors), registers, asks the
    /// bus for the signals `matches` describes and starts the reader thread. With `confirmed`,
    /// each match rule waits for the bus's answer, so that no signal it matches can be missed
    /// once this returns (and a refused rule is an error).
    init(
        address: String, bus: String, matches: [String], confirmed: Bool, threadName: String,
        onSignal: @escaping (OpaquePointer) -> Void, onEnd: @escaping () -> Void
    ) throws {
        _ = Self.threadsReady
        var error = DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        guard let c = dbus_connection_open_private(address, &error) else {
            throw DesktopError("cannot connect to the \(bus) at \(address): \(Self.text(error))")
        }
        dbus_connection_set_exit_on_disconnect(c, 0)
        guard dbus_bus_register(c, &error) != 0 else {
            dbus_connection_close(c)
            dbus_connection_unref(c)
            throw DesktopError("the \(bus) refused this client: \(Self.text(error))")
        }
        for rule in matches {
            guard confirmed else {
                // No error argument: the rule is sent without waiting for the bus to confirm it.
                dbus_bus_add_match(c, rule, nil)
                continue
            }
            dbus_bus_add_match(c, rule, &error)
            if dbus_error_is_set(&error) != 0 {
                let why = Self.text(error)
                dbus_connection_close(c)
                dbus_connection_unref(c)
                throw DesktopError("the \(bus) refused to deliver the signals asked for: \(why)")
            }
        }
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else {
            dbus_connection_close(c)
            dbus_connection_unref(c)
            throw DesktopError("cannot create a pipe: \(String(cString: strerror(errno)))")
        }
        connection = c
        self.bus = bus
        wake = (fds[0], fds[1])
        self.onSignal = onSignal
        self.onEnd = onEnd
        let thread = Thread { [self] in readLoop() }
        thread.name = threadName
        thread.start()
    }

    private static let threadsReady: Void = { _ = dbus_threads_init_default() }()

    /// Runs `body` with the connection under the lock (a method call, say); signals libdbus
    /// queued meanwhile are handed on before the lock is released — they are queued in libdbus,
    /// not in the socket, so the reader would not wake for them. Throws once the connection has
    /// ended.
    func withConnection<T>(_ body: (OpaquePointer) throws -> T) throws -> T {
        lock.lock()
        defer { lock.unlock() }
        guard !ended else { throw DesktopError("the connection to the \(bus) has ended") }
        defer { drainMessages() }
        return try body(connection)
    }

    /// Ends the reader thread and the connection.
    func stop() {
        // Under the lock the reader closes the pipe with: never a write to a closed (or reused)
        // descriptor.
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
        var fds = [
            pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0),
        ]
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
        ended = true
        dbus_connection_close(connection)
        dbus_connection_unref(connection)
        lock.unlock()
        stopped.withLock { s in
            s = true
            Glibc.close(wake.write)
        }
        Glibc.close(wake.read)
        onEnd()
    }

    /// Hands queued signals to `onSignal` (under `lock`).
    private func drainMessages() {
        while let m = dbus_connection_pop_message(connection) {
            defer { dbus_message_unref(m) }
            if dbus_message_get_type(m) == DBUS_MESSAGE_TYPE_SIGNAL { onSignal(m) }
        }
    }

    static func text(_ e: DBusError) -> String {
        e.message.map { String(cString: $0) } ?? "unknown error"
    }
}
