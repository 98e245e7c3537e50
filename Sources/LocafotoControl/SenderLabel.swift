/// How a sender is shown to people. A LocalSend device is named `localsend:` and its
/// certificate's SHA-256 (protocol/localsend.md) and shown as "LocalSend, not verified" wherever
/// a sender is, unless the user trusts it; our own peers keep their fingerprint's form.
public enum SenderLabel {
    public static func isLocalSend(_ fingerprint: String) -> Bool { fingerprint.hasPrefix("localsend:") }

    /// A LocalSend sender that showed no certificate (`localsend:unverified:<what it claims>`):
    /// its name is all there is of it, anyone can claim it, and it can never be trusted.
    public static func hasNoCertificate(_ fingerprint: String) -> Bool {
        fingerprint.hasPrefix("localsend:unverified:")
    }

    /// What follows the name: "(trusted)", "(LocalSend, not verified)", "(LocalSend, no
    /// certificate)" or nothing.
    public static func suffix(fingerprint: String, trusted: Bool) -> String {
        if trusted { return isLocalSend(fingerprint) ? " (LocalSend, trusted)" : " (trusted)" }
        if hasNoCertificate(fingerprint) { return " (LocalSend, no certificate)" }
        return isLocalSend(fingerprint) ? " (LocalSend, not verified)" : ""
    }

    /// A short form for prompts and tables: the first group of our fingerprints; "LocalSend" and
    /// the first 16 hex digits of a certificate's.
    public static func short(_ fingerprint: String) -> String {
        if hasNoCertificate(fingerprint) { return "LocalSend, no certificate" }
        if isLocalSend(fingerprint) {
            let hash = fingerprint.split(separator: ":").last.map(String.init) ?? fingerprint
            return "LocalSend " + hash.prefix(16) + "…"
        }
        return fingerprint.split(separator: "-").first.map(String.init) ?? fingerprint
    }
}
