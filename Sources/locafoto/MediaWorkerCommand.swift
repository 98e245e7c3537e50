import ArgumentParser
import Foundation
import LocafotoMediaWorker

/// The agent's photo decoding, in a process of its own (`MediaWorkers` starts it): libvips and
/// the decoders never enter the agent, whose memory therefore does not grow with photos, and a
/// decoder that a hostile photo crashes takes only this process down. Not for people: it speaks
/// a framed protocol on standard input and output.
struct MediaWorkerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "media-worker",
        abstract: "Decode photos for the agent (previews, thumbnails); started by the agent, not by hand.",
        shouldDisplay: false)

    @Option(name: .long, help: ArgumentHelp("Exit after this many seconds without a request.", valueName: "seconds"))
    var idleExit: Int = 60

    func run() throws {
        // Only the pipe to the agent: any other descriptor that came along (a libc without
        // posix_spawn's closefrom) would keep an agent's connection open after it closed it.
        for fd in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd"))?.compactMap(Int32.init) ?? []
        where fd > 2 {
            close(fd)
        }
        let status = MediaWorkerServer.run(idleExit: .seconds(max(1, idleExit)))
        if status != 0 { throw ExitCode(status) }
    }

    /// How the agent starts workers: this same program.
    static var command: [String]? {
        guard let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else { return nil }
        return [exe, "media-worker"]
    }
}
