import NIOCore
import NIOPosix

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// What went wrong with a connection, in a person's words: what happened, and where it helps,
/// what to check. SwiftNIO's errors read `read(descriptor:pointer:size:): Connection reset by
/// peer (errno: 104)`; every message that names a failed connection goes through here instead.
package enum NetworkFailure: Sendable, Equatable {
    /// The other side closed or reset the connection.
    case closed
    /// Nothing listens at that port.
    case refused
    /// Nothing answered in time.
    case timedOut
    /// No route to that address.
    case unreachable
    /// The host name has no address.
    case unresolved
    /// Another system error, by its text (never its number).
    case other(String)

    /// The failure `error` is, or nil when it is not a connection's (a refusal by the peer, a
    /// file, a cancel).
    package init?(_ error: any Error) {
        var code: Int32?
        switch error {
        case let e as NIOConnectionError:
            if e.dnsAError != nil || e.dnsAAAAError != nil, e.connectionErrors.isEmpty {
                self = .unresolved
                return
            }
            code = e.connectionErrors.lazy.compactMap { ($0.error as? IOError)?.errnoCode }.first
            if code == nil, e.connectionErrors.isEmpty {
                self = .unresolved
                return
            }
        case let e as IOError:
            code = e.errnoCode
        case ChannelError.connectTimeout:
            self = .timedOut
            return
        case ChannelError.ioOnClosedChannel, ChannelError.alreadyClosed, ChannelError.eof,
            ChannelError.outputClosed, ChannelError.inputClosed:
            self = .closed
            return
        default:
            return nil
        }
        switch code {
        case ECONNREFUSED: self = .refused
        case ETIMEDOUT: self = .timedOut
        case EHOSTUNREACH, ENETUNREACH: self = .unreachable
        case ECONNRESET, EPIPE, ECONNABORTED: self = .closed
        case let c?: self = .other(String(cString: strerror(c)).lowercased())
        case nil: self = .other("the connection failed")
        }
    }

    /// Why a connection could not be made, for "cannot connect to ADDRESS: …".
    package var connecting: String {
        switch self {
        case .closed: "the connection was reset"
        case .refused:
            "connection refused (nothing listens on that port; is the port right, and is the program running?)"
        case .timedOut: "nothing answered in time (is the address right, and the other side's firewall open?)"
        case .unreachable: "no route to that address (is it on this network?)"
        case .unresolved: "the host name cannot be resolved"
        case .other(let text): text
        }
    }

    /// What happened to a connection that was open, with `who` as the subject ("bob's agent").
    package func during(_ who: String) -> String {
        switch self {
        case .closed: "\(who) closed the connection"
        case .timedOut: "\(who) stopped answering"
        case .refused, .unreachable, .unresolved: "\(who) can no longer be reached (\(connecting))"
        case .other(let text): "the connection to \(who) failed (\(text))"
        }
    }

    /// Why listening on `port` failed, in words, with what to do (`option`: the flag that picks
    /// another port); nil for an error that is not a socket's.
    package static func listening(_ error: any Error, port: Int, option: String) -> String? {
        guard let e = error as? IOError else { return NetworkFailure(error)?.connecting }
        switch e.errnoCode {
        case EADDRINUSE:
            return "port \(port) is taken by another program; stop it, or choose another port with \(option)"
        case EACCES: return "this user may not listen on port \(port); choose a port above 1023 with \(option)"
        case EADDRNOTAVAIL: return "the address given to --listen is not one of this machine's"
        case EMFILE, ENFILE: return "no file descriptors are left (too many open files)"
        default: return NetworkFailure(error)?.connecting
        }
    }

    /// Why a connection failed, in words (`connecting`); any other error as it describes itself.
    package static func reason(_ error: any Error) -> String { NetworkFailure(error)?.connecting ?? "\(error)" }
}
