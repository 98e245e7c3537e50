import Foundation
import LocafotoControl
import LocafotoErrors
import Synchronization

/// An exclusive lock on a node home (`flock` on `<home>/agent.lock`), taken before an agent or
/// relay changes anything there. The lock file holds the owner's pid, for the message a second
/// agent gives. The kernel drops the lock when the process ends, however it ends.
package final class HomeLock: Sendable {
    private let fd: Mutex<Int32>

    private init(fd: Int32) {
        self.fd = Mutex(fd)
    }

    deinit { release() }

    /// Gives the home up (the process ending does the same).
    package func release() {
        fd.withLock { fd in
            guard fd >= 0 else { return }
            close(fd)
            fd = -1
        }
    }

    package static func path(_ home: NodeHome) -> String { home.directory + "/agent.lock" }

    package static func acquire(_ home: NodeHome) throws -> HomeLock {
        let path = path(home)
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            throw AgentError(.io, "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let owner = readOwner(fd)
            close(fd)
            throw AgentError(
                .conflict,
                "an agent is already running for this home (\(home.directory))\(owner.map { " (pid \($0))" } ?? ""); stop it first, or use another --home"
            )
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = pwrite(fd, pid, pid.count, 0)
        return HomeLock(fd: fd)
    }

    private static func readOwner(_ fd: Int32) -> Int32? {
        var buf = [UInt8](repeating: 0, count: 32)
        let n = pread(fd, &buf, buf.count, 0)
        guard n > 0 else { return nil }
        return Int32(String(decoding: buf[..<n], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
