import Foundation
import LocafotoFiles
import LocafotoWire

/// The relay's files: a failed call is `RelayError.io` naming the path and errno's text; a file
/// the relay wrote that is not as it left it (missing, replaced, larger than such a file may
/// be) is `damaged`: the deposit cannot be used.
let disk = FileSystem(failures: RelayFileFailures())

struct RelayFileFailures: FileFailures {
    func failed(_ what: String, _ path: String, errno: Int32) -> any Error {
        RelayError(.io, .storageFailed, "relay could not \(what) \(path): \(FileSystem.errorText(errno))")
    }

    func damaged(_ path: String, _ message: String) -> any Error {
        RelayError(.damaged, .storageFailed, message)
    }

    func tooLarge(_ path: String, size: Int64, limit: Int) -> any Error {
        RelayError(
            .damaged, .storageFailed,
            "\(path) is \(ByteCount.text(size)), more than the \(ByteCount.text(Int64(limit))) such a file may have")
    }
}
