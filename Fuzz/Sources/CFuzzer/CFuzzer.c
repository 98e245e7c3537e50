// Declarations only (libFuzzer is linked by -sanitize=fuzzer), and one stub.
#include "CFuzzer.h"

#include <stdlib.h>

// libFuzzer's own `main` (its FuzzerMain.o) calls LLVMFuzzerTestOneInput. Our targets never use
// that `main`: each hands its callback to LLVMFuzzerRunDriver. A release link drops the unused
// object (--gc-sections); a debug link keeps it and needs the symbol, so it is defined here,
// weak, and fails loudly if anything ever calls it.
__attribute__((weak)) int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    (void)data;
    (void)size;
    abort();
}
