import Foundation

/// The hidden command `media-worker`: answers requests on standard input until it closes (the agent ends
/// an idle worker that way), or until none came for `idleExit` (an agent that hangs).
public enum MediaWorkerServer {
    public static func run(
        input: Int32 = STDIN_FILENO, output: Int32 = STDOUT_FILENO, idleExit: Duration = .seconds(60)
    ) -> Int32 {
        let wait = WorkerFraming.milliseconds(idleExit)
        while true {
            let request: MediaRequest
            let body: [UInt8]
            do {
                (request, body) = try WorkerFraming.read(
                    MediaRequest.self, from: input, maxBody: WorkerFraming.maxRequestBody, waitMilliseconds: wait)
            } catch is WorkerFraming.Closed {
                return 0
            } catch is WorkerFraming.TimedOut {
                return 0
            } catch {
                FileHandle.standardError.write(Data("locafoto media-worker: \(error)\n".utf8))
                return 65
            }
            let (reply, out) = MediaJob.perform(request, body: body)
            do { try WorkerFraming.write(reply, body: out, to: output) } catch { return 0 }
        }
    }
}
