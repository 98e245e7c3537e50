import CAvahi
import LocafotoErrors

/// Thrown only for programming or resource errors: a missing daemon is not an
/// error but a `DiscoveryEvent.daemonUnavailable`. The cause, when an Avahi call failed, is
/// its `avahi_strerror` text.
public typealias DiscoveryError = LayerError<DiscoveryErrorCode>

public enum DiscoveryErrorCode: String, LayerErrorCode {
    /// `start()` was called twice, or after `stop()`.
    case alreadyStarted
    /// The service type is not a valid DNS-SD type such as "_locafoto._tcp".
    case invalidServiceType
    /// Instance name or TXT pairs cannot be published.
    case invalidAdvertisement
    /// Creating or starting the Avahi event loop thread failed.
    case pollFailed
}

/// Plain text for an Avahi error code (negative AVAHI_ERR_*).
func avahiErrorText(_ code: Int32) -> String {
    guard let text = avahi_strerror(code) else { return "avahi error \(code)" }
    return String(cString: text)
}
