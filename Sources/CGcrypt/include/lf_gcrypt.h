#ifndef LOCAFOTO_GCRYPT_H
#define LOCAFOTO_GCRYPT_H

#include <stddef.h>
#include <stdint.h>

/* libgcrypt's BLAKE2b-256 for photo content hashes, behind plain C functions: gcry_control is
   variadic, which Swift cannot call. */

/* Initialises libgcrypt once, with its AVX2/AVX-512 code paths for every algorithm turned off,
   so that BLAKE2b runs its portable 64-bit C code (about twice libsodium's AVX2 code on some
   CPUs; LocafotoCrypto measures both and keeps the faster). Returns 0 on success. libgcrypt
   serves nothing else in this process. */
int lf_gcrypt_start(void);

/* An incremental BLAKE2b-256: NULL if libgcrypt could not open one. */
void *lf_gcrypt_blake2b256_open(void);
void lf_gcrypt_blake2b256_update(void *h, const void *bytes, size_t count);
/* Writes the 32-byte digest of what was hashed to `out`; `h` takes no more updates after it. */
void lf_gcrypt_blake2b256_digest(void *h, uint8_t out[32]);
/* A copy of the state, for a digest of what was hashed so far; NULL on failure. */
void *lf_gcrypt_blake2b256_copy(void *h);
/* Frees `h` (libgcrypt wipes its state). */
void lf_gcrypt_blake2b256_free(void *h);

#endif
