#ifndef LOCAFOTO_COPENSSL_SHIM_H
#define LOCAFOTO_COPENSSL_SHIM_H
// OpenSSL's libcrypto, for the bulk AEADs only (ChaCha20-Poly1305, AES-256-GCM): see
// LocafotoCrypto/BulkAEAD.swift for why. Everything else stays on libsodium.
#include <openssl/evp.h>
#include <openssl/crypto.h>
#endif
