#ifndef LOCAFOTO_COPENSSL_SHIM_H
#define LOCAFOTO_COPENSSL_SHIM_H
// OpenSSL's libcrypto, for the bulk AEADs (ChaCha20-Poly1305, AES-256-GCM: see
// LocafotoCrypto/BulkAEAD.swift for why), and the self-signed certificate a node shows
// LocalSend devices (LocafotoCrypto/TLSCertificate.swift). Everything else stays on libsodium.
#include <openssl/evp.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/x509.h>
#endif
