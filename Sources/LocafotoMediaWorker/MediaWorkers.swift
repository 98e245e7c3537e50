import Foundation
import LocafotoMedia
import Synchronization

/// Has `MediaJob`s done by worker processes (`command`: this program's hidden `media-worker`), at most
/// `limit` at a time, one request each at a time. A worker is started when a request finds none
/// idle, and ended once idle for `idle` (its socket closed, it exits and is reaped), so that its
/// memory goes back to the system when photos stop coming; a worker also exits by itself when its
/// agent has gone quiet for longer (`MediaWorkerServer`). A request that finds its worker gone is
/// sent once more to a new one (every request can be repeated). A worker that crashes, answers
/// nonsense or takes longer than `timeout` is killed, and the request fails.
public final class MediaWorkers: Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    private final class Worker: @unchecked Sendable {
        let pid: pid_t
        let socket: Int32
        /// Bumped each time it goes back to the idle list (guarded by the pool's state lock).
        var uses = 0

        init(pid: pid_t, socket: Int32) {
            self.pid = pid
            self.socket = socket
        }

        /// Closes its pipes and reaps it (killed first unless it is known to be exiting).
        func end(kill: Bool) {
            if kill { _ = Glibc.kill(pid, SIGKILL) }
            close(socket)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        }
    }

    private struct State {
        var idle: [Worker] = []
        var started = 0
    }

    private let command: [String]
    private let timeout: Duration
    private let idle: Duration
    private let state = Mutex(State())
    private let slots: DispatchSemaphore

    public init(
        command: [String], limit: Int = max(1, ProcessInfo.processInfo.activeProcessorCount),
        timeout: Duration = .seconds(120),
        idle: Duration = .seconds(2)
    ) {
        precondition(!command.isEmpty)
        self.command = command
        self.timeout = timeout
        self.idle = idle
        slots = DispatchSemaphore(value: max(1, limit))
        // A worker that exits while a request is written must fail that write, not kill us.
        signal(SIGPIPE, SIG_IGN)
    }

    deinit { for w in state.withLock({ $0.idle }) { w.end(kill: true) } }

    /// How many workers were started so far (for tests).
    public var startedCount: Int { state.withLock { $0.started } }

    /// The idle workers' process ids (for tests).
    var idlePIDs: [pid_t] { state.withLock { $0.idle.map(\.pid) } }

    /// Does `request` in a worker; blocks the calling thread (call it from blocking work).
    public func perform(_ request: MediaRequest, body: [UInt8] = []) throws -> MediaResult {
        slots.wait()
        defer { slots.signal() }
        // An idle worker may have just exited: then once more, with a new one.
        for attempt in 0..<2 {
            let (worker, fresh) = try take()
            do {
                try WorkerFraming.write(request, body: body, to: worker.socket)
                let (reply, out) = try WorkerFraming.read(
                    MediaReply.self, from: worker.socket, maxBody: WorkerFraming.maxReplyBody,
                    waitMilliseconds: WorkerFraming.milliseconds(timeout))
                putBack(worker)
                return MediaResult(reply, out)
            } catch is WorkerFraming.Closed where !fresh && attempt == 0 {
                worker.end(kill: false)
                continue
            } catch is WorkerFraming.TimedOut {
                worker.end(kill: true)
                throw Failure(description: "the media worker took longer than \(timeout) on one photo and was stopped")
            } catch {
                worker.end(kill: true)
                throw Failure(
                    description: "the media worker failed on this photo (\(error)); it may be damaged or hostile")
            }
        }
        throw Failure(description: "the media worker could not be reached")
    }

    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    /// glibc 2.34's `posix_spawn_file_actions_addclosefrom_np`, looked up at run time (Swift's
    /// Glibc module does not declare this GNU extension).
    private static let closeFrom: CloseFrom? = dlsym(
        UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np"
    )
    .map { unsafeBitCast($0, to: CloseFrom.self) }

    /// Back to the idle list; ended if it is still there, unused, after `idle`.
    private func putBack(_ worker: Worker) {
        let use = state.withLock { s -> Int in
            worker.uses += 1
            s.idle.append(worker)
            return worker.uses
        }
        let (seconds, atto) = idle.components
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + Double(seconds) + Double(atto) * 1e-18) {
            [weak self] in
            guard let self else { return }
            let stale = self.state.withLock { s -> Bool in
                guard worker.uses == use, let i = s.idle.firstIndex(where: { $0 === worker }) else { return false }
                s.idle.remove(at: i)
                return true
            }
            if stale { worker.end(kill: false) }  // EOF: it exits at once
        }
    }

    /// An idle worker (the most recently used: its pages are warm), or a new one.
    private func take() throws -> (Worker, fresh: Bool) {
        if let w = state.withLock({ $0.idle.popLast() }) { return (w, false) }
        return (try spawn(), true)
    }

    private func spawn() throws -> Worker {
        // One stream socket pair, close-on-exec from its creation (no other child started
        // meanwhile inherits it): the worker's end becomes its standard input and output.
        var pair: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            throw Failure(description: "cannot make a socket pair: \(String(cString: strerror(errno)))")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // The child's standard input and output are its ends of the pipes (dup2 clears
        // close-on-exec); standard error stays the agent's, for a decoder's last words.
        posix_spawn_file_actions_adddup2(&actions, pair[1], STDIN_FILENO)
        posix_spawn_file_actions_adddup2(&actions, pair[1], STDOUT_FILENO)
        // Nothing else of ours goes with it, whatever its close-on-exec flag: a peer's socket
        // held open by a worker would not close when we close it (no FIN while a copy lives).
        _ = Self.closeFrom?(&actions, 3)
        var pid: pid_t = 0
        let argv = command.map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        let rc = posix_spawn(&pid, command[0], &actions, nil, argv, environ)
        close(pair[1])
        guard rc == 0 else {
            close(pair[0])
            throw Failure(description: "cannot start the media worker \(command[0]): \(String(cString: strerror(rc)))")
        }
        state.withLock { $0.started += 1 }
        return Worker(pid: pid, socket: pair[0])
    }
}
