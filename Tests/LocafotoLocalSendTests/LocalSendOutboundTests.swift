import Foundation
import LocafotoLocalSend
import Testing

/// The sending side of LocalSend's upload API, answer by answer: no server.
@Suite("LocalSend: sending a session")
struct LocalSendOutboundTests {
    static let own = LocalSendDevice(
        alias: "desk", version: "2.1", deviceModel: "Locafoto", deviceType: .desktop, fingerprint: "OWN", port: 53317,
        protocol: "https", download: false)
    static let files = ["a", "b", "c"].map {
        LocalSendFile(
            id: $0, fileName: "\($0).jpg", size: 10, fileType: "image/jpeg", sha256: String(repeating: "0", count: 64))
    }

    static func answer(_ tokens: [String: String], session: String = "s1") -> [UInt8] {
        Array(try! JSONEncoder().encode(LocalSendPrepareUploadAnswer(sessionId: session, files: tokens)))
    }

    static func uploads(_ actions: [LocalSendOutbound.Action]) -> [String] {
        actions.compactMap { if case .upload(let f, _) = $0 { f.id } else { nil } }
    }

    @Test("the prepare-upload names this node and every file; a PIN goes in the query")
    func prepare() throws {
        let out = LocalSendOutbound(own: Self.own, files: Self.files, pin: "47 11")
        let (path, body) = out.prepareRequest
        #expect(path == "/api/localsend/v2/prepare-upload?pin=47%2011")
        // Only ASCII letters, digits and -._~ stay as they are: no raw non-ASCII in a request line.
        let other = LocalSendOutbound(own: Self.own, files: Self.files, pin: "é1&x=٣~")
        #expect(other.prepareRequest.path == "/api/localsend/v2/prepare-upload?pin=%C3%A91%26x%3D%D9%A3~")
        let request = try LocalSendJSON.prepareUpload(body, limits: LocalSendLimits())
        #expect(request.info.fingerprint == "OWN")
        #expect(request.orderedFiles.map(\.id) == ["a", "b", "c"])
        #expect(
            LocalSendOutbound(own: Self.own, files: Self.files).prepareRequest.path
                == "/api/localsend/v2/prepare-upload")
    }

    @Test("accepted: two uploads at once, the next as one ends, then sent; files without a token are skipped")
    func uploads() {
        var out = LocalSendOutbound(own: Self.own, files: Self.files)
        let first = out.answered(status: 200, body: Self.answer(["a": "ta", "b": "tb", "c": "t c"]))
        #expect(Self.uploads(first) == ["a", "b"])
        guard case .upload(_, let path) = first[0] else { return }
        #expect(path == "/api/localsend/v2/upload?sessionId=s1&fileId=a&token=ta")
        let next = out.uploadEnded("a", status: 200)
        #expect(Self.uploads(next) == ["c"])
        guard case .upload(_, let pathC) = next[0] else { return }
        #expect(pathC.hasSuffix("token=t%20c"))  // tokens are escaped
        #expect(out.uploadEnded("b", status: 200) == [])
        #expect(out.uploadEnded("c", status: 200) == [.finished(.sent(files: 3, skipped: 0))])
        #expect(out.uploadEnded("c", status: 200) == [])  // over

        var partial = LocalSendOutbound(own: Self.own, files: Self.files)
        #expect(Self.uploads(partial.answered(status: 200, body: Self.answer(["b": "tb"]))) == ["b"])
        #expect(partial.uploadEnded("b", status: 200) == [.finished(.sent(files: 1, skipped: 2))])
    }

    @Test("each refusal of the prepare-upload says what it means")
    func refusals() {
        let cases: [(Int, LocalSendOutbound.Outcome)] = [
            (204, .nothingNeeded), (401, .pinRequired), (403, .declined), (409, .busy), (429, .tooManyTries),
            (500, .failed("the device answered HTTP 500")),
        ]
        for (status, outcome) in cases {
            var out = LocalSendOutbound(own: Self.own, files: Self.files)
            #expect(out.answered(status: status, body: []) == [.finished(outcome)], "\(status)")
            #expect(out.outcome == outcome)
        }
    }

    @Test("a hostile or broken answer ends the send: not JSON, tokens for files not offered, empty tokens")
    func hostileAnswers() {
        let bodies: [[UInt8]] = [
            Array("{".utf8), Self.answer(["x": "tx"]), Self.answer(["a": ""]), Self.answer(["a": "t"], session: ""),
            [UInt8](repeating: 0x20, count: LocalSendOutbound.maxAnswerBytes + 1),
        ]
        for body in bodies {
            var out = LocalSendOutbound(own: Self.own, files: Self.files)
            let actions = out.answered(status: 200, body: body)
            guard case .finished(.failed) = actions.last else {
                Issue.record("not a failure: \(actions)")
                continue
            }
            #expect(actions.count == 1)  // no session yet: nothing to cancel
        }
    }

    @Test("a failed upload cancels the session at the receiver and says why; a cancel by the user too")
    func failures() {
        var out = LocalSendOutbound(own: Self.own, files: Self.files)
        _ = out.answered(status: 200, body: Self.answer(["a": "ta", "b": "tb"]))
        let actions = out.uploadEnded("a", status: 422)
        #expect(actions.first == .cancelRemote(path: "/api/localsend/v2/cancel?sessionId=s1"))
        guard case .finished(.failed(let why)) = actions.last else {
            Issue.record("\(actions)")
            return
        }
        #expect(why.contains("a.jpg") && why.contains("SHA-256"))
        #expect(out.uploadEnded("b", status: 200) == [])  // over: the other upload's end changes nothing

        var broken = LocalSendOutbound(own: Self.own, files: Self.files)
        _ = broken.answered(status: 200, body: Self.answer(["a": "ta"]))
        guard case .finished(.failed(let why2)) = broken.uploadEnded("a", status: nil).last else { return }
        #expect(why2.contains("connection broke"))

        var cancelled = LocalSendOutbound(own: Self.own, files: Self.files)
        #expect(cancelled.cancel() == [.finished(.cancelled)])  // before any session: nothing to tell
        var running = LocalSendOutbound(own: Self.own, files: Self.files)
        _ = running.answered(status: 200, body: Self.answer(["a": "ta"]))
        #expect(
            running.cancel() == [
                .cancelRemote(path: "/api/localsend/v2/cancel?sessionId=s1"), .finished(.cancelled),
            ])
        #expect(running.cancel() == [])
    }
}
