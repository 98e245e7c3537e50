import CDBus
import Foundation
import Synchronization

/// What went wrong talking to the desktop; `message` says what to do.
public struct DesktopError: Error, CustomStringConvertible, Sendable {
    public var message: String
    public var description: String { message }
    init(_ message: String) { self.message = message }
}

/// One desktop notification (the Desktop Notifications Specification, 1.2).
public struct DesktopNotification: Sendable {
    public var summary: String
    public var body: String
    /// (key, label) pairs: the server shows the labels and reports the key of the one chosen.
    public var actions: [(key: String, label: String)] = []
    /// 0 low, 1 normal, 2 critical.
    public var urgency: UInt8 = 1
    /// Replace this earlier notification instead of showing another.
    public var replaces: UInt32 = 0
    /// Milliseconds; -1 the server's default, 0 until the user acts.
    public var expireTimeout: Int32 = -1
    /// A picture sent as the `image-data` hint; give it only to a server that lists
    /// `body-images` or `icon-static` in `capabilities()`.
    public var image: DesktopImage?

    public init(summary: String, body: String) {
        self.summary = summary
        self.body = body
    }
}

/// Pixels for the `image-data` hint (`(iiibiiay)`: width, height, row stride, has alpha, bits
/// per sample, channels, data): 8-bit RGB without alpha, rows top to bottom.
public struct DesktopImage: Sendable, Equatable {
    public var width: Int32
    public var height: Int32
    public var rowStride: Int32
    public var rgb: [UInt8]

    public init(width: Int, height: Int, rowStride: Int, rgb: [UInt8]) {
        self.width = Int32(width)
        self.height = Int32(height)
        self.rowStride = Int32(rowStride)
        self.rgb = rgb
    }
}

/// The notification server's signals.
public enum NotificationSignal: Sendable, Equatable {
    /// The user chose the action with this key on notification `id`.
    case action(id: UInt32, key: String)
    /// Notification `id` went away (1 expired, 2 dismissed by the user, 3 closed by a call, 4 other).
    case closed(id: UInt32, reason: UInt32)
}

/// `org.freedesktop.Notifications` on the user's session bus, through libdbus (the reference
/// implementation), on one private `BusConnection`; the server's signals go to `signals`.
public final class NotificationClient: @unchecked Sendable {
    static let service = "org.freedesktop.Notifications"
    static let path = "/org/freedesktop/Notifications"

    private let bus: BusConnection
    public let signals: AsyncStream<NotificationSignal>

    /// Connects to the session bus named by DBUS_SESSION_BUS_ADDRESS, or at
    /// `$XDG_RUNTIME_DIR/bus`. Never starts a bus (libdbus would otherwise try X11 autolaunch).
    public static func session(environment: [String: String] = ProcessInfo.processInfo.environment) throws
        -> NotificationClient
    {
        let address =
            environment["DBUS_SESSION_BUS_ADDRESS"].flatMap { $0.isEmpty ? nil : $0 }
            ?? environment["XDG_RUNTIME_DIR"].map { "unix:path=\($0)/bus" }.flatMap { a in
                FileManager.default.fileExists(atPath: String(a.dropFirst("unix:path=".count))) ? a : nil
            }
        guard let address else {
            throw DesktopError("no desktop session bus (DBUS_SESSION_BUS_ADDRESS is not set)")
        }
        return try NotificationClient(address: address)
    }

    init(address: String) throws {
        let (signals, continuation) = AsyncStream.makeStream(
            of: NotificationSignal.self, bufferingPolicy: .bufferingNewest(256))
        self.signals = signals
        bus = try BusConnection(
            address: address, bus: "session bus",
            matches: ["ActionInvoked", "NotificationClosed"].map {
                "type='signal',interface='\(Self.service)',member='\($0)'"
            },
            confirmed: false, threadName: "locafoto-notifications",
            onSignal: { Self.decode($0).map { _ = continuation.yield($0) } }, onEnd: { continuation.finish() })
    }

    /// The server's name and version, e.g. ("dunst", "1.9.0").
    public func serverInformation() throws -> (name: String, version: String) {
        let strings = try call("GetServerInformation") { _ in }.strings()
        guard strings.count >= 2 else {
            throw DesktopError("the notification server answered GetServerInformation oddly")
        }
        return (strings[0], strings[2 < strings.count ? 2 : 1])
    }

    /// What the server can show (GetCapabilities), e.g. `body`, `actions`, `body-images`, `icon-static`.
    public func capabilities() throws -> [String] {
        try call("GetCapabilities") { _ in }.strings()
    }

    /// Shows `n`; returns its id (for `close` and to match the signals).
    public func notify(_ n: DesktopNotification, app: String = "Locafoto", desktopEntry: String = "locafoto") throws
        -> UInt32
    {
        let reply = try call("Notify") { m in
            var it = DBusMessageIter()
            dbus_message_iter_init_append(m, &it)
            Self.append(&it, app)
            var replaces = n.replaces
            dbus_message_iter_append_basic(&it, Self.type("u"), &replaces)
            Self.append(&it, "")  // icon: the desktop entry's
            Self.append(&it, n.summary)
            Self.append(&it, n.body)
            var list = DBusMessageIter()
            dbus_message_iter_open_container(&it, Self.type("a"), "s", &list)
            for a in n.actions {
                Self.append(&list, a.key)
                Self.append(&list, a.label)
            }
            dbus_message_iter_close_container(&it, &list)
            var hints = DBusMessageIter()
            dbus_message_iter_open_container(&it, Self.type("a"), "{sv}", &hints)
            Self.hint(&hints, "urgency", "y") {
                var u = n.urgency
                dbus_message_iter_append_basic(&$0, Self.type("y"), &u)
            }
            Self.hint(&hints, "desktop-entry", "s") { Self.append(&$0, desktopEntry) }
            Self.hint(&hints, "category", "s") { Self.append(&$0, "transfer") }
            if let image = n.image { Self.hint(&hints, "image-data", "(iiibiiay)") { Self.append(&$0, image) } }
            dbus_message_iter_close_container(&it, &hints)
            var timeout = n.expireTimeout
            dbus_message_iter_append_basic(&it, Self.type("i"), &timeout)
        }
        guard let id = reply.uint32s().first else { throw DesktopError("the notification server did not return an id") }
        return id
    }

    /// Takes notification `id` off the screen.
    public func close(_ id: UInt32) throws {
        _ = try call("CloseNotification") { m in
            var it = DBusMessageIter()
            dbus_message_iter_init_append(m, &it)
            var v = id
            dbus_message_iter_append_basic(&it, Self.type("u"), &v)
        }
    }

    /// Ends the reader thread and the connection; `signals` finishes.
    public func stop() { bus.stop() }

    // MARK: libdbus

    private final class Reply {
        let message: OpaquePointer
        init(_ m: OpaquePointer) { message = m }
        deinit { dbus_message_unref(message) }

        func strings() -> [String] {
            values { it in
                guard dbus_message_iter_get_arg_type(&it) == NotificationClient.type("s") else { return nil }
                var p: UnsafePointer<CChar>?
                dbus_message_iter_get_basic(&it, &p)
                return p.map { String(cString: $0) }
            }
        }

        func uint32s() -> [UInt32] {
            values { it in
                guard dbus_message_iter_get_arg_type(&it) == NotificationClient.type("u") else { return nil }
                var v: UInt32 = 0
                dbus_message_iter_get_basic(&it, &v)
                return v
            }
        }

        /// The top-level values, or those of a top-level array (GetCapabilities answers `as`).
        private func values<T>(_ read: (inout DBusMessageIter) -> T?) -> [T] {
            var it = DBusMessageIter()
            guard dbus_message_iter_init(message, &it) != 0 else { return [] }
            var out: [T] = []
            repeat {
                if dbus_message_iter_get_arg_type(&it) == NotificationClient.type("a") {
                    var sub = DBusMessageIter()
                    dbus_message_iter_recurse(&it, &sub)
                    while dbus_message_iter_get_arg_type(&sub) != 0 {
                        if let v = read(&sub) { out.append(v) }
                        dbus_message_iter_next(&sub)
                    }
                } else if let v = read(&it) {
                    out.append(v)
                }
            } while dbus_message_iter_next(&it) != 0
            return out
        }
    }

    /// A method call on the notification server, waiting up to 5 s for its answer.
    private func call(_ method: String, _ build: (OpaquePointer) -> Void) throws -> Reply {
        guard let m = dbus_message_new_method_call(Self.service, Self.path, Self.service, method) else {
            throw DesktopError("out of memory")
        }
        defer { dbus_message_unref(m) }
        build(m)
        var error = DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        let reply = try bus.withConnection { dbus_connection_send_with_reply_and_block($0, m, 5000, &error) }
        guard let reply else {
            throw DesktopError(
                "the notification server did not answer \(method): \(Self.text(error)) (is a notification daemon running in this session?)"
            )
        }
        return Reply(reply)
    }

    /// The server's signal in `m`, if it is one of those this client follows.
    private static func decode(_ m: OpaquePointer) -> NotificationSignal? {
        var it = DBusMessageIter()
        guard dbus_message_iter_init(m, &it) != 0, dbus_message_iter_get_arg_type(&it) == type("u") else { return nil }
        var id: UInt32 = 0
        dbus_message_iter_get_basic(&it, &id)
        guard dbus_message_iter_next(&it) != 0 else { return nil }
        if dbus_message_is_signal(m, service, "ActionInvoked") != 0, dbus_message_iter_get_arg_type(&it) == type("s") {
            var p: UnsafePointer<CChar>?
            dbus_message_iter_get_basic(&it, &p)
            return .action(id: id, key: p.map { String(cString: $0) } ?? "")
        }
        if dbus_message_is_signal(m, service, "NotificationClosed") != 0,
            dbus_message_iter_get_arg_type(&it) == type("u")
        {
            var reason: UInt32 = 0
            dbus_message_iter_get_basic(&it, &reason)
            return .closed(id: id, reason: reason)
        }
        return nil
    }

    static func type(_ code: Character) -> Int32 { Int32(code.asciiValue!) }

    static func append(_ it: inout DBusMessageIter, _ s: String) {
        // D-Bus strings must be valid UTF-8 without NUL (Swift strings are UTF-8; NULs cut).
        s.replacingOccurrences(of: "\0", with: "").withCString { p in
            var p: UnsafePointer<CChar>? = p
            dbus_message_iter_append_basic(&it, type("s"), &p)
        }
    }

    /// The `(iiibiiay)` structure of `image-data`.
    static func append(_ it: inout DBusMessageIter, _ image: DesktopImage) {
        var st = DBusMessageIter()
        dbus_message_iter_open_container(&it, type("r"), nil, &st)
        for var v in [image.width, image.height, image.rowStride] { dbus_message_iter_append_basic(&st, type("i"), &v) }
        var alpha: dbus_bool_t = 0
        dbus_message_iter_append_basic(&st, type("b"), &alpha)
        for var v: Int32 in [8, 3] { dbus_message_iter_append_basic(&st, type("i"), &v) }
        var bytes = DBusMessageIter()
        dbus_message_iter_open_container(&st, type("a"), "y", &bytes)
        image.rgb.withUnsafeBufferPointer { b in
            var p: UnsafePointer<UInt8>? = b.baseAddress
            dbus_message_iter_append_fixed_array(&bytes, type("y"), &p, Int32(b.count))
        }
        dbus_message_iter_close_container(&st, &bytes)
        dbus_message_iter_close_container(&it, &st)
    }

    static func hint(
        _ dict: inout DBusMessageIter, _ key: String, _ signature: String, _ value: (inout DBusMessageIter) -> Void
    ) {
        var entry = DBusMessageIter()
        dbus_message_iter_open_container(&dict, type("e"), nil, &entry)
        append(&entry, key)
        var variant = DBusMessageIter()
        dbus_message_iter_open_container(&entry, type("v"), signature, &variant)
        value(&variant)
        dbus_message_iter_close_container(&entry, &variant)
        dbus_message_iter_close_container(&dict, &entry)
    }

    static func text(_ e: DBusError) -> String { BusConnection.text(e) }
}
