// libFuzzer's entry point for programs that have their own main (LLVM >= 12). SwiftPM links
// every executable with `main` renamed to `<module>_main`, so each fuzz target defines that
// function and hands over to libFuzzer's driver from there.
#include <stddef.h>
#include <stdint.h>
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
