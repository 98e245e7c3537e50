internal import COpenSSL
import LocafotoErrors

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A self-signed X.509 certificate and its ECDSA P-256 key, made and checked with OpenSSL's
/// libcrypto: the identity a node shows LocalSend devices over TLS (they pin the SHA-256 of the
/// certificate's DER, `fingerprint`). Nothing here is a locafoto identity: our own protocol
/// pins Ed25519 keys through Noise and never reads this.
public struct TLSCertificate: Sendable {
    /// The certificate, DER.
    public let der: [UInt8]
    /// Its private key, DER (SEC 1 `ECPrivateKey`, what `d2i_AutoPrivateKey` reads).
    public let privateKeyDER: SecretBytes

    /// A certificate valid from a day ago for `years` years, for `commonName`, with a random
    /// positive 63-bit serial number.
    public static func make(commonName: String, years: Int = 10) throws -> TLSCertificate {
        guard let ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_EC, nil) else { throw failure("could not start key generation") }
        defer { EVP_PKEY_CTX_free(ctx) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(ctx) == 1,
            EVP_PKEY_CTX_set_ec_paramgen_curve_nid(ctx, NID_X9_62_prime256v1) == 1,
            EVP_PKEY_keygen(ctx, &key) == 1, let key
        else { throw failure("could not make a P-256 key") }
        defer { EVP_PKEY_free(key) }

        guard let cert = X509_new() else { throw failure("could not make a certificate") }
        defer { X509_free(cert) }
        var serial: Int64 = 0
        withUnsafeMutableBytes(of: &serial) { SecureRandom.fill($0) }
        let day: Int = 86_400
        guard X509_set_version(cert, 2) == 1,  // v3
            ASN1_INTEGER_set_int64(X509_get_serialNumber(cert), serial & .max) == 1,
            X509_gmtime_adj(X509_getm_notBefore(cert), -day) != nil,
            X509_gmtime_adj(X509_getm_notAfter(cert), day * 365 * years) != nil,
            X509_set_pubkey(cert, key) == 1,
            let name = X509_get_subject_name(cert),
            X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, commonName, -1, -1, 0) == 1,
            X509_set_issuer_name(cert, name) == 1,
            X509_sign(cert, key, EVP_sha256()) > 0
        else { throw failure("could not sign the certificate") }

        let der = try encode { i2d_X509(cert, $0) }
        var keyDER = try encode { i2d_PrivateKey(key, $0) }
        return try TLSCertificate(der: der, privateKeyDER: SecretBytes(consuming: &keyDER))
    }

    /// A certificate and key read back (from the node's home): the certificate must parse, its
    /// signature verify with its own key, and the key must be the certificate's.
    public init(der: [UInt8], privateKeyDER: SecretBytes) throws {
        guard let cert = Self.parse(der) else { throw Self.failure("the certificate is not DER X.509") }
        defer { X509_free(cert) }
        let key = privateKeyDER.withUnsafeBytes { raw -> OpaquePointer? in
            var p = raw.baseAddress?.assumingMemoryBound(to: UInt8.self)
            return d2i_AutoPrivateKey(nil, &p, raw.count)
        }
        guard let key else { throw Self.failure("the private key is not DER") }
        defer { EVP_PKEY_free(key) }
        guard X509_check_private_key(cert, key) == 1 else {
            throw Self.failure("the private key is not the certificate's")
        }
        guard X509_verify(cert, key) == 1 else { throw Self.failure("the certificate's signature does not verify") }
        self.der = der
        self.privateKeyDER = privateKeyDER
    }

    /// LocalSend's fingerprint of this certificate (`TLSCertificate.fingerprint(of:)`).
    public var fingerprint: String { Self.fingerprint(of: der) }

    /// The uppercase hex SHA-256 of a certificate's DER: how LocalSend names a device.
    public static func fingerprint(of der: some ContiguousBytes) -> String {
        Hex.encode(SHA256.hash(der)).uppercased()
    }

    /// The time after which the certificate is no longer valid, in seconds since 1970.
    public var notAfter: Int64? {
        guard let cert = Self.parse(der) else { return nil }
        defer { X509_free(cert) }
        var tm = tm()
        guard ASN1_TIME_to_tm(X509_get0_notAfter(cert), &tm) == 1 else { return nil }
        return Int64(timegm(&tm))
    }

    private static func parse(_ der: [UInt8]) -> OpaquePointer? {
        der.withUnsafeBufferPointer { b in
            var p = b.baseAddress
            let cert = d2i_X509(nil, &p, b.count)
            // Nothing may follow the certificate.
            guard let cert, p == b.baseAddress.map({ $0 + b.count }) else {
                X509_free(cert)
                return nil
            }
            return cert
        }
    }

    /// OpenSSL's two-call i2d pattern: the length, then the bytes.
    private static func encode(_ i2d: (UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?) -> Int32) throws
        -> [UInt8]
    {
        let n = i2d(nil)
        guard n > 0 else { throw failure("could not encode") }
        var out = [UInt8](repeating: 0, count: Int(n))
        let written = out.withUnsafeMutableBufferPointer { b -> Int32 in
            var p = b.baseAddress
            return i2d(&p)
        }
        guard written == n else { throw failure("could not encode") }
        return out
    }

    private static func failure(_ what: String) -> CryptoError {
        ERR_clear_error()
        return CryptoError(.invalidKey, "TLS certificate: \(what)")
    }
}
