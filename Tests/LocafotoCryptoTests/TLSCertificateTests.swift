import Foundation
import LocafotoCrypto
import Testing

@Suite("TLS certificate (LocalSend identity)")
struct TLSCertificateTests {
    @Test("a made certificate reads back, and its fingerprint is OpenSSL's SHA-256 of its DER")
    func makeAndReadBack() throws {
        let cert = try TLSCertificate.make(commonName: "Locafoto test")
        #expect(cert.fingerprint.count == 64)
        #expect(cert.fingerprint == cert.fingerprint.uppercased())
        let again = try TLSCertificate(der: cert.der, privateKeyDER: cert.privateKeyDER)
        #expect(again.fingerprint == cert.fingerprint)
        let notAfter = try #require(cert.notAfter)
        #expect(notAfter > Int64(Date().timeIntervalSince1970) + 9 * 365 * 86_400)

        // The openssl command computes the same fingerprint from the same bytes, independently.
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tlscert-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("cert.der")
        try Data(cert.der).write(to: file)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        p.arguments = ["x509", "-inform", "DER", "-in", file.path, "-noout", "-subject", "-fingerprint", "-sha256"]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationStatus == 0)
        #expect(text.contains("CN = Locafoto test"))
        #expect(text.replacingOccurrences(of: ":", with: "").contains("Fingerprint=\(cert.fingerprint)"))
    }

    @Test("each certificate has its own key")
    func fresh() throws {
        let a = try TLSCertificate.make(commonName: "a")
        let b = try TLSCertificate.make(commonName: "a")
        #expect(a.fingerprint != b.fingerprint)
        #expect(a.privateKeyDER.unsafeCopy() != b.privateKeyDER.unsafeCopy())
    }

    @Test("damaged files are refused: altered, truncated or extended DER, another certificate's key")
    func damaged() throws {
        let a = try TLSCertificate.make(commonName: "a")
        let b = try TLSCertificate.make(commonName: "b")
        var altered = a.der
        altered[altered.count - 10] ^= 0x01  // inside the signature
        for der in [altered, Array(a.der.dropLast()), a.der + [0], [], [0x30, 0x00]] {
            expectCryptoError(.invalidKey) { try TLSCertificate(der: der, privateKeyDER: a.privateKeyDER) }
        }
        expectCryptoError(.invalidKey) { try TLSCertificate(der: a.der, privateKeyDER: b.privateKeyDER) }
        expectCryptoError(.invalidKey) {
            try TLSCertificate(der: a.der, privateKeyDER: SecretBytes(copying: [UInt8](repeating: 7, count: 121)))
        }
    }
}
