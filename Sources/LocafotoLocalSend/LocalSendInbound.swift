/// The receiving side of LocalSend's upload API (protocol README §4), as a value: one session
/// at a time, from its prepare-upload through the node's decision, the uploads by token and a
/// cancel, to its end. Requests in, answers (HTTP statuses) out; no I/O. The caller gives the
/// random session ids and tokens and the time, and carries the answers out. Tested request by
/// request.
public struct LocalSendInbound: Sendable {
    /// A request refused, with the status the protocol gives it and what to tell the sender.
    public struct Refusal: Error, Equatable, Sendable {
        public let status: Int
        public let message: String

        public init(_ status: Int, _ message: String) {
            self.status = status
            self.message = message
        }
    }

    public enum FileState: Sendable, Equatable {
        /// Wanted, with a token; no upload yet.
        case waiting
        /// Its upload runs.
        case receiving
        case received
        case failed
    }

    public struct Session: Sendable, Equatable {
        public let id: String
        /// The sender's IP address: uploads and a cancel from any other are refused.
        public let sender: String
        public let request: LocalSendPrepareUpload
        /// Tokens of the files the node wants, by file id (empty until it decides).
        public fileprivate(set) var tokens: [String: String] = [:]
        public fileprivate(set) var files: [String: FileState] = [:]
        public fileprivate(set) var decided = false

        /// Every wanted file has ended (received or failed).
        public var isOver: Bool { decided && files.values.allSatisfy { $0 == .received || $0 == .failed } }
    }

    /// What the node answers a prepare-upload once it has decided.
    public enum Decision: Sendable, Equatable {
        /// 200 with the session id and a token per wanted file.
        case accepted(LocalSendPrepareUploadAnswer)
        /// 204: nothing of it is wanted (every file refused, or all already here).
        case nothingWanted
        /// 403: the user (or the policy) rejected it.
        case rejected
    }

    /// The PIN LocalSend senders must give (`?pin=`), when the user set one.
    public var pin: String?
    public private(set) var session: Session?
    /// Wrong PINs: how many may be tried, from where, how fast.
    public private(set) var pinGuard = PINGuard()

    public init(pin: String? = nil) { self.pin = pin }

    /// A prepare-upload from `address`. Refused: 401 without the right PIN (none given counts as
    /// no guess), 429 while wrong ones
    /// must wait (`PINGuard`: checked before the PIN is compared), 409 while another session
    /// runs. Otherwise it is the session, waiting for the node's decision (`decide`).
    public mutating func prepare(
        _ request: LocalSendPrepareUpload, from address: String, pin given: String?, sessionID: String,
        now: ContinuousClock.Instant
    ) throws(Refusal) -> Session {
        if let pin {
            // No PIN is no guess: the apps ask without one first, and learn only that one is needed.
            guard let given else { throw Refusal(401, "PIN required") }
            if let wait = pinGuard.wait(for: address, now: now) {
                throw Refusal(429, "too many wrong PINs; wait \(wait) s")
            }
            guard given == pin else {
                pinGuard.failed(address, now: now)
                throw Refusal(401, "wrong PIN")
            }
            pinGuard.succeeded(address)
        }
        guard session == nil else { throw Refusal(409, "another session is running; try again when it ends") }
        let s = Session(id: sessionID, sender: address, request: request)
        session = s
        return s
    }

    /// The node's decision on the waiting session: the files it wants, each with a token from
    /// `token`. Rejected, or none wanted, ends the session.
    public mutating func decide(
        _ sessionID: String, accepted: Bool, wanted: Set<String>, token: () -> String
    ) throws(Refusal) -> Decision {
        guard var s = session, s.id == sessionID, !s.decided else {
            throw Refusal(409, "no session \(sessionID) is waiting for a decision")
        }
        let files = accepted ? wanted.intersection(s.request.files.keys) : []
        guard accepted, !files.isEmpty else {
            session = nil
            return accepted ? .nothingWanted : .rejected
        }
        s.decided = true
        for id in files.sorted() {
            s.tokens[id] = token()
            s.files[id] = .waiting
        }
        session = s
        return .accepted(LocalSendPrepareUploadAnswer(sessionId: s.id, files: s.tokens))
    }

    /// `upload?sessionId&fileId&token` from `address`: the file whose bytes follow (its
    /// declared size is what must arrive). 400 without the parameters, 409 for another or no
    /// session, 403 for a wrong token or address, 409 for a file already received or receiving.
    public mutating func beginUpload(
        sessionID: String?, fileID: String?, token: String?, from address: String
    ) throws(Refusal) -> LocalSendFile {
        guard let sessionID, let fileID, let token else {
            throw Refusal(400, "sessionId, fileId and token are required")
        }
        guard var s = session, s.id == sessionID, s.decided else {
            throw Refusal(409, "session \(sessionID) is not the running one")
        }
        guard s.sender == address, let expected = s.tokens[fileID], expected == token,
            let file = s.request.files[fileID]
        else { throw Refusal(403, "invalid token or IP address") }
        guard s.files[fileID] == .waiting else {
            throw Refusal(409, "file \(fileID) was already sent in this session")
        }
        s.files[fileID] = .receiving
        session = s
        return file
    }

    /// The upload of `fileID` ended: received (every declared byte, the hash right) or not.
    /// Returns true when that ended the session (every wanted file has ended).
    @discardableResult
    public mutating func endUpload(_ fileID: String, received: Bool) -> Bool {
        guard var s = session, s.files[fileID] == .receiving else { return false }
        s.files[fileID] = received ? .received : .failed
        session = s.isOver ? nil : s
        return s.isOver
    }

    /// `cancel?sessionId` from the session's sender: ends the session. Returns the files whose
    /// uploads were running (the caller stops them and keeps nothing of them); a file not yet
    /// begun is failed with the session.
    public mutating func cancel(sessionID: String?, from address: String) throws(Refusal) -> [String] {
        guard let sessionID else { throw Refusal(400, "sessionId is required") }
        guard let s = session, s.id == sessionID else {
            throw Refusal(409, "session \(sessionID) is not the running one")
        }
        guard s.sender == address else { throw Refusal(403, "invalid IP address") }
        session = nil
        return s.files.filter { $0.value == .receiving }.map(\.key).sorted()
    }
}
