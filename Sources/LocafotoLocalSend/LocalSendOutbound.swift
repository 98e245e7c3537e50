import Foundation

/// The sending side of LocalSend's upload API (protocol README §4), as a value: the node's own
/// description and the files in, HTTP answers in, what to request next out; no I/O. One session:
/// a prepare-upload, then an upload per file the receiver gave a token for (at most
/// `maxParallel` at once, as the apps send them), then the end, or a cancel. The caller makes
/// the requests (over TLS, pinned to the device's certificate) and feeds their statuses back.
public struct LocalSendOutbound: Sendable {
    /// How a send ended, as the user is told.
    public enum Outcome: Sendable, Equatable {
        /// Every file the receiver wanted arrived (`skipped`: files it said it already had).
        case sent(files: Int, skipped: Int)
        /// 204: the receiver needed nothing.
        case nothingNeeded
        /// 403 to the prepare-upload: the receiver's user declined.
        case declined
        /// 401: a PIN is needed (none was given, or it was wrong).
        case pinRequired
        /// 409: the receiver is busy with another session.
        case busy
        /// 429: too many tries (wrong PINs); wait and try again.
        case tooManyTries
        /// Anything else: the status or what broke, said plainly.
        case failed(String)
        /// This node's user cancelled.
        case cancelled
    }

    public enum Action: Sendable, Equatable {
        /// POST `path` (`/api/localsend/v2/upload?…`) with the bytes of `file`.
        case upload(file: LocalSendFile, path: String)
        /// POST `path` (`/api/localsend/v2/cancel?sessionId=…`); its answer does not matter.
        case cancelRemote(path: String)
        /// The send is over.
        case finished(Outcome)
    }

    public static let basePath = "/api/localsend/v2"
    /// Uploads at once.
    public static let maxParallel = 2
    /// The prepare-upload answer read at most (tokens for at most 1,000 files).
    public static let maxAnswerBytes = 256 << 10

    public let own: LocalSendDevice
    public let files: [LocalSendFile]
    public let pin: String?
    public private(set) var sessionID: String?
    public private(set) var outcome: Outcome?
    private var waiting: [(LocalSendFile, String)] = []
    private var running: Set<String> = []
    private var done = 0
    private var skipped = 0

    public init(own: LocalSendDevice, files: [LocalSendFile], pin: String? = nil) {
        self.own = own
        self.files = files
        self.pin = pin
    }

    /// The prepare-upload to send first: its path (with `?pin=` when a PIN is given) and body.
    public var prepareRequest: (path: String, body: [UInt8]) {
        var path = Self.basePath + "/prepare-upload"
        if let pin { path += "?pin=" + Self.query(pin) }
        let body = LocalSendPrepareUpload(
            info: own, files: Dictionary(uniqueKeysWithValues: files.map { ($0.id, $0) }))
        return (path, LocalSendJSON.encode(body))
    }

    /// The receiver answered the prepare-upload.
    public mutating func answered(status: Int, body: [UInt8]) -> [Action] {
        guard outcome == nil else { return [] }
        switch status {
        case 200: break
        case 204: return finish(.nothingNeeded)
        case 401: return finish(.pinRequired)
        case 403: return finish(.declined)
        case 409: return finish(.busy)
        case 429: return finish(.tooManyTries)
        default: return finish(.failed("the device answered HTTP \(status)"))
        }
        guard
            let answer = try? LocalSendJSON.decode(
                LocalSendPrepareUploadAnswer.self, from: body, maxBytes: Self.maxAnswerBytes),
            !answer.sessionId.isEmpty, answer.sessionId.utf8.count <= 256
        else { return finish(.failed("the device's answer is not a LocalSend session")) }
        let ids = Set(files.map(\.id))
        guard answer.files.keys.allSatisfy(ids.contains) else {
            return finish(.failed("the device gave tokens for files that were not offered"))
        }
        guard answer.files.values.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 256 }) else {
            return finish(.failed("the device's answer has an empty or oversized token"))
        }
        sessionID = answer.sessionId
        // A file without a token is one the receiver already has (or does not want).
        waiting = files.compactMap { f in answer.files[f.id].map { (f, $0) } }
        skipped = files.count - waiting.count
        guard !waiting.isEmpty else { return finish(.sent(files: 0, skipped: skipped)) }
        return startUploads()
    }

    /// An upload ended with `status` (nil: the connection broke). Anything but 200 ends the
    /// send, telling the receiver (cancel) so that it keeps nothing half-done.
    public mutating func uploadEnded(_ fileID: String, status: Int?) -> [Action] {
        guard outcome == nil, running.remove(fileID) != nil else { return [] }
        guard status == 200 || status == 204 else {
            let why: String
            switch status {
            case nil: why = "the connection broke during \(name(fileID))"
            case 403, 409: why = "the device ended the session during \(name(fileID)) (HTTP \(status!))"
            case 415: why = "the device refused \(name(fileID)) (HTTP 415: not a type it takes)"
            case 422: why = "the device found \(name(fileID)) damaged in transit (HTTP 422: SHA-256 mismatch)"
            default: why = "the device refused \(name(fileID)) (HTTP \(status!))"
            }
            return cancelRemote() + finish(.failed(why))
        }
        done += 1
        if waiting.isEmpty && running.isEmpty { return finish(.sent(files: done, skipped: skipped)) }
        return startUploads()
    }

    /// This node's user cancels: the receiver is told when a session exists.
    public mutating func cancel() -> [Action] {
        guard outcome == nil else { return [] }
        return cancelRemote() + finish(.cancelled)
    }

    private mutating func startUploads() -> [Action] {
        var actions: [Action] = []
        while running.count < Self.maxParallel, !waiting.isEmpty {
            let (file, token) = waiting.removeFirst()
            running.insert(file.id)
            actions.append(
                .upload(file: file, path: Self.uploadPath(session: sessionID ?? "", file: file.id, token: token)))
        }
        return actions
    }

    private func cancelRemote() -> [Action] {
        guard let sessionID else { return [] }
        return [.cancelRemote(path: Self.basePath + "/cancel?sessionId=" + Self.query(sessionID))]
    }

    private mutating func finish(_ o: Outcome) -> [Action] {
        outcome = o
        waiting = []
        running = []
        return [.finished(o)]
    }

    private func name(_ fileID: String) -> String { files.first { $0.id == fileID }?.fileName ?? fileID }

    static func uploadPath(session: String, file: String, token: String) -> String {
        basePath + "/upload?sessionId=\(query(session))&fileId=\(query(file))&token=\(query(token))"
    }

    /// Percent-encoded for a query: only ASCII letters, digits and `-._~` stay as they are (RFC
    /// 3986's unreserved characters; `CharacterSet.alphanumerics` would let non-ASCII through).
    static func query(_ s: String) -> String {
        s.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}
