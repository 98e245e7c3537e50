#include "lf_gcrypt.h"

#include <gcrypt.h>
#include <pthread.h>
#include <string.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int start_status = -1;

static void start(void) {
    /* Before gcry_check_version: hardware features are fixed at initialisation. Names libgcrypt
       does not know (older versions lack some) are refused harmlessly. */
    gcry_control(GCRYCTL_DISABLE_HWF, "intel-avx2", NULL);
    gcry_control(GCRYCTL_DISABLE_HWF, "intel-avx512", NULL);
    if (gcry_check_version(GCRYPT_VERSION) == NULL) return;
    /* No secure memory pool: the digests of photos are not secret, and the pool would need
       mlock limits. */
    gcry_control(GCRYCTL_DISABLE_SECMEM, 0);
    gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
    start_status = 0;
}

int lf_gcrypt_start(void) {
    pthread_once(&once, start);
    return start_status;
}

void *lf_gcrypt_blake2b256_open(void) {
    if (lf_gcrypt_start() != 0) return NULL;
    gcry_md_hd_t h = NULL;
    if (gcry_md_open(&h, GCRY_MD_BLAKE2B_256, 0) != 0) return NULL;
    return h;
}

void lf_gcrypt_blake2b256_update(void *h, const void *bytes, size_t count) {
    gcry_md_write((gcry_md_hd_t)h, bytes, count);
}

void lf_gcrypt_blake2b256_digest(void *h, uint8_t out[32]) {
    memcpy(out, gcry_md_read((gcry_md_hd_t)h, GCRY_MD_BLAKE2B_256), 32);
}

void *lf_gcrypt_blake2b256_copy(void *h) {
    gcry_md_hd_t c = NULL;
    if (gcry_md_copy(&c, (gcry_md_hd_t)h) != 0) return NULL;
    return c;
}

void lf_gcrypt_blake2b256_free(void *h) { gcry_md_close((gcry_md_hd_t)h); }
