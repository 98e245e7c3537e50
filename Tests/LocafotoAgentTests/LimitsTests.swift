import Foundation
import LocafotoControl
import LocafotoErrors
import LocafotoSession
import LocafotoWire
import Logging
import Testing

@testable import LocafotoAgent
@testable import LocafotoControlServer
@testable import LocafotoNode
@testable import LocafotoPeers

/// Issue 8 §3 and §4, the parts that are bookkeeping or files (the sockets are in
/// Tests/Integration/test_limits.py and test_local_trust.py).
@Suite("List pages, home lock, socket trust, peer-facing errors")
struct LimitsTests {
    @Test func listPages() throws {
        let list = Array(0..<10)
        #expect(Array(ListPage().apply(list)) == list)
        #expect(Array(try ListPage(["limit": "3", "offset": "8"]).apply(list)) == [8, 9])
        #expect(Array(try ListPage(["offset": "20"]).apply(list)) == [])
        #expect(Array(try ListPage(["limit": "\(Int.max)", "offset": "1"]).apply(list)) == Array(1..<10))
        for bad in [["limit": "-1"], ["offset": "x"], ["limit": "1.5"]] {
            #expect(throws: AgentError.self) { try ListPage(bad) }
        }
    }

    @Test func aSecondAgentCannotTakeTheHome() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lf-lock-\(UUID().uuidString.prefix(8))"
        ).path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let home = NodeHome(directory: dir)
        try home.prepare()
        let first = try HomeLock.acquire(home)
        do {
            _ = try HomeLock.acquire(home)
            Issue.record("a second lock on the same home was granted")
        } catch let e as AgentError {
            #expect(e.message.contains("an agent is already running for this home (\(dir)) (pid \(getpid()))"))
        }
        first.release()
        let again = try HomeLock.acquire(home)
        again.release()
    }

    @Test func socketTrustChecksOwnerAndFolder() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lf-sock-\(UUID().uuidString.prefix(8))"
        ).path
        try FileManager.default.createDirectory(
            atPath: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/agent.sock"
        try ControlSocketTrust.checkPath(path)  // nothing there yet: connecting will say so
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            let b = Array(path.utf8)
            raw.copyBytes(from: b)
            raw[b.count] = 0
        }
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        try #require(rc == 0)
        try ControlSocketTrust.checkPath(path)
        // The same socket as seen by another user: not theirs.
        #expect(throws: AgentError.self) { try ControlSocketTrust.checkPath(path, uid: geteuid() + 4242) }
        // A folder others may write to, without the sticky bit.
        chmod(dir, 0o777)
        #expect(throws: AgentError.self) { try ControlSocketTrust.checkPath(path) }
        chmod(dir, 0o1777)
        try ControlSocketTrust.checkPath(path)
        // A regular file where the socket should be.
        let file = dir + "/not-a-socket"
        #expect(FileManager.default.createFile(atPath: file, contents: Data()))
        #expect(throws: AgentError.self) { try ControlSocketTrust.checkPath(file) }
    }

    @Test func peerCredentialsAreChecked() throws {
        var fds: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        defer {
            close(fds[0])
            close(fds[1])
        }
        #expect(ControlSocketTrust.peerUID(fds[0]) == geteuid())
        try ControlSocketTrust.checkPeer(fds[0], path: "pair")
        #expect(throws: AgentError.self) {
            try ControlSocketTrust.checkPeer(fds[0], path: "pair", uid: geteuid() + 4242)
        }
    }

    @Test func storageFailuresDoNotTellPeersLocalPaths() {
        let local =
            "cannot store the item: cannot write /home/alice/.local/share/locafoto/spool/x.part: No space left on device"
        for code in [WireErrorCode.storageFailed, .internalError] {
            let told = PeerFacing.message(code, local)
            #expect(!told.contains("/"), "\(told)")
            #expect(told.contains("log"))
        }
        #expect(
            PeerFacing.message(.hashMismatch, "'a.jpg' does not match the content hash in the offer")
                == "'a.jpg' does not match the content hash in the offer")
    }

    @Test func logLinesAreOneLineAndInert() {
        var event = LogEvent(
            level: .info,
            message: "offer from \("evil\u{1B}]0;x\u{07}\nforged 2026 info locafoto: all imported\u{202E}")",
            metadata: nil,
            source: "t", file: #fileID, function: #function, line: #line)
        event.metadata = ["peer": "\("a\nb")"]
        let line = SafeLogHandler.line(event, label: "locafoto", metadata: [:])
        #expect(
            !line.contains("\n") && !line.contains("\u{1B}") && !line.contains("\u{07}") && !line.contains("\u{202E}"))
        #expect(line.contains("\\u{1B}]0;x\\u{7}\\u{A}forged"))
        #expect(line.contains("peer=a\\u{A}b"))
    }
}
