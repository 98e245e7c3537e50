#if canImport(Glibc)
    import Glibc
#endif

/// Waits until process `pid` has ended (a zombie counts: ended, not yet reaped), or `timeout`
/// has passed; true if it ended. A pidfd turns readable when its process ends, so this is one
/// blocking `poll` whose timeout is a hang guard, never a loop that looks again and again.
public func waitForExit(of pid: pid_t, timeout: Duration) -> Bool {
    let fd = pidfdOpen(pid, 0)
    guard fd >= 0 else { return errno == ESRCH }  // no such process: already gone
    defer { close(fd) }
    var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
    let (seconds, attoseconds) = timeout.components
    let milliseconds = Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000)
    var result: Int32
    repeat {
        result = poll(&entry, 1, milliseconds)
    } while result < 0 && errno == EINTR
    return result == 1
}

/// Linux's `pidfd_open(2)`: glibc 2.36 has it, Swift's Glibc module leaves <sys/pidfd.h> out.
@_silgen_name("pidfd_open")
private func pidfdOpen(_ pid: pid_t, _ flags: UInt32) -> Int32
