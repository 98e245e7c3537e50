import Dispatch
import Foundation
import LocafotoErrors
import LocafotoFiles

/// The vault's files: every failed call is `VaultError.io` naming the path, with errno's text as
/// its cause; a file the vault wrote that is not as it left it is `corrupt`.
let disk = FileSystem(failures: VaultFileFailures())

struct VaultFileFailures: FileFailures {
    func failed(_ what: String, _ path: String, errno: Int32) -> any Error {
        VaultError(.io, "could not \(what) \(path)", cause: CauseText(FileSystem.errorText(errno)))
    }

    func damaged(_ path: String, _ message: String) -> any Error {
        VaultError(.corrupt, message)
    }
}

/// An fsync of a file, run on a thread of its own so that the caller goes on meanwhile (a
/// receiver goes on with the next photo); `wait` returns once it is done, or throws its error.
/// One serial queue for all of them: they go to the disk in the order asked.
final class BackgroundSync: @unchecked Sendable {
    private static let queue = DispatchQueue(label: "locafoto.vault.fsync", qos: .userInitiated)
    private let done = DispatchSemaphore(value: 0)
    /// Written on `queue` before `done` is signalled, read only after waiting for it.
    private var failure: VaultError?

    init(path: String) {
        Self.queue.async { [self] in
            do {
                let fd = try disk.open(path, O_RDONLY, what: "open the received file")
                defer { fd.close() }
                try fd.sync()
            } catch {
                failure =
                    error as? VaultError ?? VaultError(.io, "could not flush \(path) to disk", cause: error)
            }
            done.signal()
        }
    }

    func wait() throws {
        done.wait()
        done.signal()  // a second wait returns at once
        if let failure { throw failure }
    }
}
