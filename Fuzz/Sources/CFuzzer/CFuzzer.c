// Declarations only (libFuzzer is linked by -sanitize=fuzzer).
#include "CFuzzer.h"
