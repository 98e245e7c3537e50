import ArgumentParser
import Foundation
import LocafotoControl
import LocafotoVault

/// `locafoto capture` (seed 003's camera): one frame from a V4L2 camera, taken by ffmpeg and
/// piped straight into the agent's streaming import (`POST /v1/import`, the path of
/// `import -`): the JPEG exists only in the pipe and is encrypted as it arrives. The classify
/// hook decides as for any local import.
struct CaptureCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "capture", abstract: "Take a photo with a camera (V4L2, through ffmpeg) straight into the vault.",
        discussion: """
            ffmpeg (`apt-get install ffmpeg`) reads one frame from the camera as JPEG and writes it to \
            a pipe that goes into the encrypted vault: no plaintext file is written. Without a camera, \
            or without permission to use it, the command says which and what to do. \
            LOCAFOTO_FFMPEG names another ffmpeg program.
            """)
    @OptionGroup var global: GlobalOptions
    @Option(help: ArgumentHelp("The camera's device.", valueName: "path")) var device: String = "/dev/video0"
    @Option(
        help: ArgumentHelp("Frame size to ask the camera for, e.g. 1280x720 (default: the camera's).", valueName: "WxH")
    ) var size: String?
    @Option(help: "Name to record for the photo (default: capture-<time>.jpg).") var name: String?

    func validate() throws {
        if let size,
            size.split(separator: "x").count != 2
                || !size.split(separator: "x").allSatisfy({ Int($0).map { $0 > 0 } ?? false })
        {
            throw ValidationError("--size takes WIDTHxHEIGHT, e.g. 1280x720")
        }
    }

    func run() throws {
        try Self.checkCamera(device)
        let ffmpeg =
            ProcessInfo.processInfo.environment["LOCAFOTO_FFMPEG"].flatMap { $0.isEmpty ? nil : $0 } ?? "ffmpeg"
        guard let program = Self.which(ffmpeg) else {
            throw CLIError(
                "capture needs ffmpeg, which is not installed: `sudo apt-get install ffmpeg`",
                code: .unavailable)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        var args = ["-hide_banner", "-loglevel", "error", "-f", "v4l2"]
        if let size { args += ["-video_size", size] }
        args += ["-i", device, "-frames:v", "1", "-f", "image2pipe", "-vcodec", "mjpeg", "-"]
        process.arguments = args
        let frames = Pipe()
        let errors = Pipe()
        process.standardOutput = frames
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw CLIError("cannot start \(program): \(error)", code: .unavailable)
        }
        try? frames.fileHandleForWriting.close()  // ours: the upload sees the end when ffmpeg exits
        let recorded = name ?? "capture-\(Self.stamp()).jpg"
        let q = "?name=\(recorded.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")"
        let answer = Result {
            try global.client.upload("/v1/import\(q)", from: frames.fileHandleForReading.fileDescriptor)
        }
        // e.g. no agent: nobody reads the frame
        if case .failure = answer, process.isRunning { process.terminate() }
        process.waitUntilExit()
        if case .failure(let e) = answer { throw e }
        let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        guard process.terminationStatus == 0 else {
            // The agent saw an empty or cut body and refused it; ffmpeg's reason is the one to show.
            let first =
                said.split(separator: "\n").first.map(String.init) ?? "exit status \(process.terminationStatus)"
            throw CLIError(
                "ffmpeg could not take a photo from \(device): \(first). Is it a camera (`v4l2-ctl --list-devices`), and is no other program using it?",
                code: .io)
        }
        let r = try global.typed(PhotoRecord.self, "/v1/import", try answer.get())
        global.say(r) { "captured \(String($0.id.prefix(8)))  \($0.format)  \(Format.bytes($0.originalSize))" }
    }

    /// No camera there, or not this user's to use: said before anything runs, with what to do.
    static func checkCamera(_ device: String) throws {
        var st = stat()
        guard stat(device, &st) == 0 else {
            let found = ((try? FileManager.default.contentsOfDirectory(atPath: "/dev")) ?? []).filter {
                $0.hasPrefix("video")
            }.sorted()
            let others =
                found.isEmpty
                ? "no camera is connected (no /dev/video* device)"
                : "cameras here: \(found.map { "/dev/\($0)" }.joined(separator: ", "))"
            throw CLIError(
                "no camera at \(device): \(others). Connect one (a USB webcam appears as /dev/videoN), or name it with --device",
                code: .notFound)
        }
        guard access(device, R_OK | W_OK) == 0 else {
            throw CLIError(
                "no permission to use the camera \(device) (\(String(cString: strerror(errno)))): cameras belong to the `video` group; "
                    + "add yourself with `sudo usermod -aG video $USER` and log in again",
                code: .refused)
        }
        guard st.st_mode & S_IFMT == S_IFCHR else {
            throw CLIError(
                "\(device) is not a camera (not a device file); cameras are /dev/videoN, name one with --device",
                code: .invalidRequest)
        }
    }

    static func which(_ program: String) -> String? {
        if program.contains("/") { return access(program, X_OK) == 0 ? program : nil }
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let p = "\(dir)/\(program)"
            if access(p, X_OK) == 0 { return p }
        }
        return nil
    }

    static func stamp() -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.dateFormat = "yyyyMMdd-HHmmss"
        return f.string(from: Date())
    }
}
