/// How a sender is shown to people. A LocalSend device is named `localsend:` and its
/// certificate's SHA-256 (protocol/localsend.md) and shown as "LocalSend, not verified" wherever
/// a sender is, unless the user trusts it; our own peers keep their fingerprint's form.
public enum SenderLabel {
    public static func isLocalSend(_ fingerprint: String) -> Bool { fingerprint.hasPrefix("localsend:") }

    /// What follows the name: "(trusted)", "(LocalSend, not verified)" or nothing.
    public static func suffix(fingerprint: String, trusted: Bool) -> String {
        if trusted { return isLocalSend(fingerprint) ? " (LocalSend, trusted)" : " (trusted)" }
        return isLocalSend(fingerprint) ? " (LocalSend, not verified)" : ""
    }

    /// A short form for prompts and tables: the first group of our fingerprints; "LocalSend" and
    /// the first 16 hex digits of a certificate's.
    public static func short(_ fingerprint: String) -> String {
        if isLocalSend(fingerprint) {
            let hash = fingerprint.split(separator: ":").last.map(String.init) ?? fingerprint
            return "LocalSend " + hash.prefix(16) + "…"
        }
        return fingerprint.split(separator: "-").first.map(String.init) ?? fingerprint
    }
}
