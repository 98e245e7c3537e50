import Foundation
import LocafotoControl
import LocafotoErrors
import LocafotoNode

/// Who may own the control socket the CLI talks to. The CLI sends passphrases over it, so it
/// must not talk to a socket someone else put in its way (another user who bound the path first
/// in a shared `XDG_RUNTIME_DIR`, say). Checked twice: the path before connecting (the socket
/// and its folder belong to this user), and the process that answers, by its credentials on
/// the connected socket (`SO_PEERCRED`), which no race on the path can fake.
public enum ControlSocketTrust {
    /// The socket file and its folder belong to the user `uid` (or, for the folder, to root).
    /// A folder others may write to must have the sticky bit, so nobody else can replace the
    /// socket inside it. A missing socket is not an error here: connecting will say so.
    public static func checkPath(_ path: String, uid: uid_t = geteuid()) throws {
        let folder = (path as NSString).deletingLastPathComponent
        var d = stat()
        guard lstat(folder.isEmpty ? "." : folder, &d) == 0 else { return }
        guard (d.st_mode & S_IFMT) == S_IFDIR else {
            throw AgentError(.refused, "the control socket's folder \(folder) is not a directory; refusing to use it")
        }
        guard d.st_uid == uid || d.st_uid == 0 else {
            throw AgentError(
                .refused,
                "the control socket's folder \(folder) belongs to user \(d.st_uid), not to you (\(uid)); refusing to talk to an agent there. Set XDG_RUNTIME_DIR to a folder of yours (mode 0700) or use --socket"
            )
        }
        if d.st_mode & (S_IWGRP | S_IWOTH) != 0 && d.st_mode & S_ISVTX == 0 {
            throw AgentError(
                .refused,
                "the control socket's folder \(folder) is writable by other users; refusing to talk to an agent there. Make it private (chmod 700) or set XDG_RUNTIME_DIR to a folder of yours"
            )
        }
        var s = stat()
        guard lstat(path, &s) == 0 else { return }
        guard (s.st_mode & S_IFMT) == S_IFSOCK else {
            throw AgentError(.refused, "\(path) is not a socket; refusing to use it as the agent's control socket")
        }
        guard s.st_uid == uid else {
            throw AgentError(
                .refused,
                "the control socket \(path) belongs to user \(s.st_uid), not to you (\(uid)): another user may be impersonating your agent. Nothing was sent. Remove it or use --socket"
            )
        }
    }

    /// The user id of the process at the other end of a connected Unix socket.
    public static func peerUID(_ fd: Int32) -> uid_t? {
        // struct ucred {pid_t pid; uid_t uid; gid_t gid;}: glibc declares it only under
        // _GNU_SOURCE, which Swift's Glibc module does not set.
        var cred: (pid: Int32, uid: UInt32, gid: UInt32) = (0, 0, 0)
        var len = socklen_t(MemoryLayout.size(ofValue: cred))
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0, Int(len) == MemoryLayout.size(ofValue: cred)
        else { return nil }
        return cred.uid
    }

    /// Refuses an agent process that runs as another user (root's agent is refused too: the CLI
    /// of a user has no business sending secrets to it).
    public static func checkPeer(_ fd: Int32, path: String, uid: uid_t = geteuid()) throws {
        guard let peer = peerUID(fd) else {
            throw AgentError(.refused, "cannot tell who answers on \(path); refusing to talk to it")
        }
        guard peer == uid else {
            throw AgentError(
                .refused,
                "the process answering on \(path) runs as user \(peer), not as you (\(uid)): it is not your agent. Nothing was sent"
            )
        }
    }
}
