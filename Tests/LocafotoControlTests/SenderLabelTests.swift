import LocafotoControl
import Testing

/// How a sender is named to people (issue 42: a sender with no certificate claiming a known
/// device's alias was shown exactly as the real device).
@Suite struct SenderLabelTests {
    static let certificate = "localsend:" + String(repeating: "AB", count: 32)
    static let claimed = "localsend:unverified:" + String(repeating: "AB", count: 32)

    @Test func aSenderWithoutACertificateIsNeverShownAsTheDeviceItClaims() {
        #expect(SenderLabel.suffix(fingerprint: Self.certificate, trusted: false) == " (LocalSend, not verified)")
        #expect(SenderLabel.suffix(fingerprint: Self.claimed, trusted: false) == " (LocalSend, no certificate)")
        #expect(SenderLabel.short(Self.certificate) == "LocalSend ABABABABABABABAB…")
        #expect(SenderLabel.short(Self.claimed) == "LocalSend, no certificate")
        #expect(SenderLabel.suffix(fingerprint: Self.certificate, trusted: true) == " (LocalSend, trusted)")
        #expect(SenderLabel.hasNoCertificate(Self.claimed) && !SenderLabel.hasNoCertificate(Self.certificate))
    }
}
