// glibc's `stdout` is a C global variable; reading it is safe (it never changes), which
// @preconcurrency tells the compiler.
@preconcurrency import Glibc

/// Flushes stdout only. `fflush(NULL)` locks every stream, stdin included: it waits forever
/// while another thread is blocked reading a line (as `receive`'s reader is).
func flushStandardOutput() {
    fflush(stdout)
}
