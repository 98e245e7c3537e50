import CAvahi

/// Thrown only for programming or resource errors: a missing daemon is not an
/// error but a `DiscoveryEvent.daemonUnavailable`.
public struct DiscoveryError: Error, CustomStringConvertible, Sendable, Equatable {
    /// Stable, comparable error kinds. A struct over a private enum so cases can
    /// be added later without breaking exhaustive switches in other modules.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Backing: String, Sendable {
            case alreadyStarted
            case invalidServiceType
            case invalidAdvertisement
            case pollFailed
        }
        fileprivate let backing: Backing
        fileprivate init(_ backing: Backing) { self.backing = backing }

        /// `start()` was called twice, or after `stop()`.
        public static let alreadyStarted = Code(.alreadyStarted)
        /// The service type is not a valid DNS-SD type such as "_locafoto._tcp".
        public static let invalidServiceType = Code(.invalidServiceType)
        /// Instance name or TXT pairs cannot be published.
        public static let invalidAdvertisement = Code(.invalidAdvertisement)
        /// Creating or starting the Avahi event loop thread failed.
        public static let pollFailed = Code(.pollFailed)

        public var description: String { backing.rawValue }
    }

    public let code: Code
    /// What went wrong and what to do about it.
    public let message: String
    /// `avahi_strerror` text when an Avahi call failed.
    public let avahiError: String?

    init(_ code: Code, _ message: String, avahiError: String? = nil) {
        self.code = code
        self.message = message
        self.avahiError = avahiError
    }

    public var description: String {
        if let avahiError { return "\(message) (avahi: \(avahiError))" }
        return message
    }
}

/// Plain text for an Avahi error code (negative AVAHI_ERR_*).
func avahiErrorText(_ code: Int32) -> String {
    guard let text = avahi_strerror(code) else { return "avahi error \(code)" }
    return String(cString: text)
}
