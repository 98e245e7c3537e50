import LocafotoLocalSend
import Testing

/// The receiving side of LocalSend's upload API, request by request: no server, no clock.
@Suite("LocalSend: receiving a session")
struct LocalSendInboundTests {
    static let phone = "192.168.1.20"
    static let t0 = ContinuousClock.now

    static func request(_ ids: [String] = ["a", "b"]) -> LocalSendPrepareUpload {
        LocalSendPrepareUpload(
            info: LocalSendDevice(alias: "Pixel", fingerprint: "AB"),
            files: Dictionary(
                uniqueKeysWithValues: ids.map {
                    ($0, LocalSendFile(id: $0, fileName: "\($0).jpg", size: 10, fileType: "image/jpeg"))
                }))
    }

    /// The status a request is refused with (nil: taken). Called outside `#expect`, whose
    /// expansion cannot mutate what the closure captures.
    static func status(_ body: () throws -> Void) -> Int? {
        do {
            try body()
            return nil
        } catch let e as LocalSendInbound.Refusal {
            return e.status
        } catch {
            Issue.record("not a refusal: \(error)")
            return nil
        }
    }

    /// A node with a decided session: files a and b wanted, tokens "t-a", "t-b".
    static func accepted() throws -> LocalSendInbound {
        var n = LocalSendInbound()
        _ = try n.prepare(request(), from: phone, pin: nil, sessionID: "s1", now: t0)
        var tokens = ["t-a", "t-b"].makeIterator()
        _ = try n.decide("s1", accepted: true, wanted: ["a", "b"]) { tokens.next()! }
        return n
    }

    @Test("accepted: a token per wanted file; each upload once; the last end ends the session")
    func wholeSession() throws {
        var n = LocalSendInbound()
        let s = try n.prepare(Self.request(["a", "b", "c"]), from: Self.phone, pin: nil, sessionID: "s1", now: Self.t0)
        #expect(s.id == "s1" && !s.decided)
        var k = 0
        let d = try n.decide("s1", accepted: true, wanted: ["a", "c", "zz"]) {
            k += 1
            return "t\(k)"
        }
        // "zz" is not offered; "b" is not wanted (no token: its upload would be refused).
        #expect(d == .accepted(LocalSendPrepareUploadAnswer(sessionId: "s1", files: ["a": "t1", "c": "t2"])))
        let a = try n.beginUpload(sessionID: "s1", fileID: "a", token: "t1", from: Self.phone)
        #expect(a.fileName == "a.jpg" && a.size == 10)
        let refused1 = Self.status {
            _ = try n.beginUpload(sessionID: "s1", fileID: "a", token: "t1", from: Self.phone)
        }
        #expect(refused1 == 409)
        let refused2 = Self.status {
            _ = try n.beginUpload(sessionID: "s1", fileID: "b", token: "t1", from: Self.phone)
        }
        #expect(refused2 == 403)
        _ = try n.beginUpload(sessionID: "s1", fileID: "c", token: "t2", from: Self.phone)
        let firstEnded = n.endUpload("a", received: true)
        #expect(!firstEnded)
        let lastEnded = n.endUpload("c", received: false)
        #expect(lastEnded)  // the last one ended: the session is over
        #expect(n.session == nil)
    }

    @Test("rejected is 403 and nothing wanted is 204; either ends the session")
    func declined() throws {
        var n = LocalSendInbound()
        _ = try n.prepare(Self.request(), from: Self.phone, pin: nil, sessionID: "s1", now: Self.t0)
        #expect(try n.decide("s1", accepted: false, wanted: ["a"]) { "t" } == .rejected)
        #expect(n.session == nil)
        _ = try n.prepare(Self.request(), from: Self.phone, pin: nil, sessionID: "s2", now: Self.t0)
        #expect(try n.decide("s2", accepted: true, wanted: []) { "t" } == .nothingWanted)
        #expect(n.session == nil)
    }

    @Test("one session at a time: another prepare-upload is 409 until it ends")
    func busy() throws {
        var n = try Self.accepted()
        let refused3 = Self.status {
            _ = try n.prepare(Self.request(), from: "192.168.1.30", pin: nil, sessionID: "s2", now: Self.t0)
        }
        #expect(refused3 == 409)
        _ = try n.cancel(sessionID: "s1", from: Self.phone)
        _ = try n.prepare(Self.request(), from: "192.168.1.30", pin: nil, sessionID: "s2", now: Self.t0)
    }

    @Test("uploads: parameters missing 400, another session 409, a wrong token or address 403")
    func uploadRefusals() throws {
        var n = try Self.accepted()
        let refused4 = Self.status {
            _ = try n.beginUpload(sessionID: "s1", fileID: nil, token: "t-a", from: Self.phone)
        }
        #expect(refused4 == 400)
        let refused5 = Self.status {
            _ = try n.beginUpload(sessionID: "s9", fileID: "a", token: "t-a", from: Self.phone)
        }
        #expect(refused5 == 409)
        let refused6 = Self.status {
            _ = try n.beginUpload(sessionID: "s1", fileID: "a", token: "t-b", from: Self.phone)
        }
        #expect(refused6 == 403)
        let refused7 = Self.status {
            _ = try n.beginUpload(sessionID: "s1", fileID: "a", token: "t-a", from: "192.168.1.99")
        }
        #expect(refused7 == 403)
        let refused8 = Self.status {
            _ = try n.beginUpload(sessionID: "s1", fileID: "x", token: "t-a", from: Self.phone)
        }
        #expect(refused8 == 403)
        // Before the decision no upload is taken.
        var waiting = LocalSendInbound()
        _ = try waiting.prepare(Self.request(), from: Self.phone, pin: nil, sessionID: "s1", now: Self.t0)
        let refused9 = Self.status {
            _ = try waiting.beginUpload(sessionID: "s1", fileID: "a", token: "t", from: Self.phone)
        }
        #expect(refused9 == 409)
    }

    @Test("cancel from the sender ends the session and names the uploads to stop; from anyone else, 403")
    func cancel() throws {
        var n = try Self.accepted()
        _ = try n.beginUpload(sessionID: "s1", fileID: "b", token: "t-b", from: Self.phone)
        let refused10 = Self.status { _ = try n.cancel(sessionID: "s1", from: "192.168.1.99") }
        #expect(refused10 == 403)
        let refused11 = Self.status { _ = try n.cancel(sessionID: nil, from: Self.phone) }
        #expect(refused11 == 400)
        #expect(try n.cancel(sessionID: "s1", from: Self.phone) == ["b"])
        #expect(n.session == nil)
        let stoppedEnded = n.endUpload("b", received: true)
        #expect(!stoppedEnded)  // the stopped upload's end changes nothing
    }

    @Test("a PIN: none or a wrong one is 401; three wrong ones (none is no guess) make the address wait 30 s (429)")
    func pin() throws {
        var n = LocalSendInbound(pin: "123456")
        let r = Self.request()
        for _ in 0..<5 {  // as the apps ask first, without one: never counted
            let refused = Self.status { _ = try n.prepare(r, from: Self.phone, pin: nil, sessionID: "s", now: Self.t0) }
            #expect(refused == 401)
        }
        let refused12 = Self.status { _ = try n.prepare(r, from: Self.phone, pin: "0", sessionID: "s", now: Self.t0) }
        #expect(refused12 == 401)
        let refused13 = Self.status { _ = try n.prepare(r, from: Self.phone, pin: "1", sessionID: "s", now: Self.t0) }
        #expect(refused13 == 401)
        let refused14 = Self.status { _ = try n.prepare(r, from: Self.phone, pin: "2", sessionID: "s", now: Self.t0) }
        #expect(refused14 == 401)
        // The right PIN now still waits: the address had three wrong ones.
        let refused15 = Self.status {
            _ = try n.prepare(r, from: Self.phone, pin: "123456", sessionID: "s", now: Self.t0)
        }
        #expect(refused15 == 429)
        // Another address is not held back by this one's tries.
        var other = n
        _ = try other.prepare(r, from: "192.168.1.30", pin: "123456", sessionID: "s", now: Self.t0)
        // After the wait, the right PIN opens the session.
        let later = Self.t0 + PINGuard.networkWait
        #expect(try n.prepare(r, from: Self.phone, pin: "123456", sessionID: "s", now: later).id == "s")
    }
}
