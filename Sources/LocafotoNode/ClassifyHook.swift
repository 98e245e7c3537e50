import Foundation
import LocafotoClock
import LocafotoControl
import LocafotoErrors
import LocafotoVault

/// The "classify before import" hook (the Linux shape of seed 002's on-device classifier): an
/// external command run by `/bin/sh -c` for every local import. It receives the photo on its
/// standard input and decides:
///
/// - exit status 0: import it; each stdout line `tag:NAME` adds the tag NAME;
/// - any other status: do not import it; the first line of stderr is shown as the reason.
///
/// A hook that runs longer than `timeout` is killed and the photo is not imported. Nothing of the
/// photo is written to disk for the hook: it gets the bytes through a pipe.
public struct ClassifyHook: Sendable {
    public let command: String
    public var timeout: Duration = .seconds(60)

    public init(command: String) {
        self.command = command
    }

    public enum Verdict: Sendable, Equatable {
        case accept(tags: [String])
        case veto(String)
    }

    package func start() throws -> ClassifyRun {
        try ClassifyRun(command: command, timeout: timeout)
    }
}

/// One run of the hook for one photo; as an `ImportGate` it sees the photo as any local import
/// path streams it into the vault, and refuses it with a `vetoed` error.
package final class ClassifyRun: ImportGate {
    private let process = Process()
    private let input = Pipe()
    private let output = OutputCollector()
    private let errors = OutputCollector()
    private let timeout: Duration
    private var inputOpen = true
    /// Signalled when the hook exits (`terminationHandler`), so that `finish` waits for the
    /// exit itself rather than looking at it now and then.
    private let exited = DispatchSemaphore(value: 0)

    init(command: String, timeout: Duration) throws {
        self.timeout = timeout
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        process.standardInput = input
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        output.collect(out.fileHandleForReading)
        errors.collect(err.fileHandleForReading)
        process.terminationHandler = { [exited] _ in exited.signal() }
        do {
            try process.run()
        } catch {
            throw AgentError(.io, "cannot start the classify hook `\(command)`: \(error)")
        }
    }

    /// Passes photo bytes to the hook. A hook that stops reading (it decided early) is fine.
    package func feed(_ bytes: UnsafeRawBufferPointer) {
        guard inputOpen else { return }
        do {
            try input.fileHandleForWriting.write(contentsOf: Data(bytes))
        } catch {
            inputOpen = false
        }
    }

    package func verdict() throws -> [String] {
        switch try finish() {
        case .accept(let tags): return tags
        case .veto(let why): throw VaultError(.vetoed, "refused by the classify hook: \(why)")
        }
    }

    func finish() throws -> ClassifyHook.Verdict {
        closeInput()
        // The bound is on the machine's time, not the agent's clock: it is a real process that
        // runs meanwhile, and this thread (the import's own) has nothing else to do.
        if exited.wait(timeout: .now() + timeout.seconds) == .timedOut {
            process.terminate()
            process.waitUntilExit()
            return .veto("the classify hook did not answer within \(timeout)")
        }
        process.waitUntilExit()
        let out = output.finish()
        let err = errors.finish()
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            let first = err.split(separator: "\n").first.map { String($0).trimmingCharacters(in: .whitespaces) } ?? ""
            return .veto(
                first.isEmpty
                    ? "the classify hook said no (exit status \(process.terminationStatus))" : String(first.prefix(200))
            )
        }
        let tags = out.split(separator: "\n").compactMap { line -> String? in
            let l = line.trimmingCharacters(in: .whitespaces)
            guard l.hasPrefix("tag:") else { return nil }
            let t = l.dropFirst(4).trimmingCharacters(in: .whitespaces)
            return t.isEmpty ? nil : String(t.prefix(64))
        }
        return .accept(tags: Array(Set(tags)).sorted())
    }

    package func cancel() {
        closeInput()
        if process.isRunning { process.terminate() }
    }

    private func closeInput() {
        try? input.fileHandleForWriting.close()
        inputOpen = false
    }
}

/// Reads a pipe in the background (so a chatty hook cannot block on a full pipe), keeping at
/// most 64 KiB.
private final class OutputCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    func collect(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                lock.lock()
                if data.count < 65536 { data.append(chunk.prefix(65536 - data.count)) }
                lock.unlock()
            }
            done.signal()
        }
    }

    func finish() -> String {
        _ = done.wait(timeout: .now() + 5)
        lock.lock()
        defer { lock.unlock() }
        return String(decoding: data, as: UTF8.self)
    }
}
