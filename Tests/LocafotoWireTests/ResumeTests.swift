import Foundation
import LocafotoFormats
import LocafotoWire
import Testing

/// Resume (cap "resume"): DECISION resume/completed lists, their validation by the sender, and
/// the receiver's ITEM_START offset rules.
@Suite("Resume")
struct ResumeTests {
    typealias S = WireTestSupport
    typealias R = ReceiverSessionTests

    /// Same offer as the receiver tests: item 0 150,000 bytes, item 1 10 bytes, item 2 empty.
    static func session(resume: [ResumePoint] = [], completed: [CompletedItem] = []) throws -> (
        ReceiverSession, WireMessage
    ) {
        var s = ReceiverSession()
        _ = try s.receive(.offer(R.offer))
        let d = s.decide(.accepted, resume: resume, completed: completed)
        return (s, d)
    }

    static func outcome(_ s: inout ReceiverSession, _ m: WireMessage) -> String {
        S.outcome { _ = try s.receive(m) }
    }

    // MARK: receiver: DECISION

    @Test func decisionCarriesTheLists() throws {
        let resume = [ResumePoint(item: 0, offset: 65_024)]
        let completed = [CompletedItem(item: 1, status: .imported, photo: S.uuid(101))]
        let (_, d) = try Self.session(resume: resume, completed: completed)
        #expect(d == .decision(Decision(offer: R.id, decision: .accepted, resume: resume, completed: completed)))
        // Empty lists are left out of the message (a peer without "resume" sees a plain DECISION).
        let (_, plain) = try Self.session()
        #expect(plain == .decision(Decision(offer: R.id, decision: .accepted)))
        #expect(
            String(decoding: try plain.encoded().dropFirst(), as: UTF8.self)
                == #"{"decision":"accepted","offer":"\#(R.id)"}"#)
    }

    /// Entries that do not fit the offer never reach the wire; the item is then sent from 0.
    @Test func decideDropsEntriesThatDoNotFit() throws {
        let (_, d) = try Self.session(
            resume: [
                ResumePoint(item: 0, offset: 0), ResumePoint(item: 0, offset: 150_000), ResumePoint(item: 3, offset: 1),
                ResumePoint(item: 2, offset: 1),  // item 2 is empty: nothing to resume
                ResumePoint(item: 1, offset: 4),
            ],
            completed: [
                CompletedItem(item: 1, status: .queued),  // also resumed: the first list (completed) wins
                CompletedItem(item: 0, status: .failed), CompletedItem(item: -1, status: .imported),
                CompletedItem(item: 2, status: .imported, photo: "not-a-uuid"),
            ])
        #expect(
            d
                == .decision(
                    Decision(
                        offer: R.id, decision: .accepted, resume: nil,
                        completed: [CompletedItem(item: 1, status: .queued), CompletedItem(item: 2, status: .imported)])
                ))
        guard case .decision(let decision) = d else { return }
        try decision.validate(itemSizes: R.sizes)
    }

    @Test func listsOnlyGoWithAccepted() throws {
        var s = ReceiverSession()
        _ = try s.receive(.offer(R.offer))
        let d = s.decide(
            .rejected, code: .refusedByPolicy, resume: [ResumePoint(item: 0, offset: 5)],
            completed: [CompletedItem(item: 1, status: .queued)],
            receipt: Array(repeating: 7, count: 64))
        #expect(
            d
                == .decision(
                    Decision(
                        offer: R.id, decision: .rejected, code: .refusedByPolicy,
                        receipt: Array(repeating: 7, count: 64))))
        #expect(s.state == .finished)
    }

    // MARK: receiver: ITEM_START offsets

    @Test func resumeOffsetIsAccepted() throws {
        var (s, _) = try Self.session(resume: [ResumePoint(item: 0, offset: 100_000)])
        guard case .itemStart(let st) = R.start(0, offset: 100_000) else { return }
        #expect(try s.receive(.itemStart(st)) == .beginItem(st))
        // Data continues at the resume offset, not at 0.
        #expect(Self.outcome(&s, R.data(0, at: 0, 10)) == "protocol_violation")
        #expect(Self.outcome(&s, R.data(0, at: 100_000, 50_000)) == "ok")
        #expect(Self.outcome(&s, R.end(0)) == "ok")
    }

    @Test func dataMustStartAtTheResumeOffset() throws {
        for offset in [0, 99_999, 100_001] {
            var (s, _) = try Self.session(resume: [ResumePoint(item: 0, offset: 100_000)])
            _ = try s.receive(R.start(0, offset: 100_000))
            #expect(Self.outcome(&s, R.data(0, at: offset, 1)) == "protocol_violation", "offset \(offset)")
        }
    }

    /// The resumed item still has to reach exactly its size: ITEM_END early is a size mismatch,
    /// more bytes than the rest are refused.
    @Test func resumedItemByteAccounting() throws {
        var (s, _) = try Self.session(resume: [ResumePoint(item: 0, offset: 100_000)])
        _ = try s.receive(R.start(0, offset: 100_000))
        #expect(Self.outcome(&s, R.end(0)) == "size_mismatch")
        var (s2, _) = try Self.session(resume: [ResumePoint(item: 0, offset: 100_000)])
        _ = try s2.receive(R.start(0, offset: 100_000))
        #expect(Self.outcome(&s2, R.data(0, at: 100_000, 50_001)) == "size_mismatch")
    }

    @Test func offsetZeroRestartsAResumableItem() throws {
        var (s, _) = try Self.session(resume: [ResumePoint(item: 0, offset: 100_000)])
        #expect(Self.outcome(&s, R.start(0, offset: 0)) == "ok")
        #expect(Self.outcome(&s, R.data(0, at: 100_000, 1)) == "protocol_violation")
        var (s2, _) = try Self.session(resume: [ResumePoint(item: 0, offset: 100_000)])
        _ = try s2.receive(R.start(0, offset: 0))
        for p in R.pieces(0) { #expect(Self.outcome(&s2, p) == "ok") }
        #expect(Self.outcome(&s2, R.end(0)) == "ok")
    }

    @Test func wrongOffsetIsRefused() throws {
        for offset: Int64 in [1, 99_999, 100_001, 150_000, 150_001, -1, .max] {
            var (s, _) = try Self.session(resume: [ResumePoint(item: 0, offset: 100_000)])
            #expect(Self.outcome(&s, R.start(0, offset: offset)) == "protocol_violation", "offset \(offset)")
            // Nothing started: the right offset still works.
            #expect(Self.outcome(&s, R.start(0, offset: 100_000)) == "ok")
        }
        // A resume offset belongs to its item only.
        var (s, _) = try Self.session(resume: [ResumePoint(item: 0, offset: 5)])
        #expect(Self.outcome(&s, R.start(1, offset: 5)) == "protocol_violation")
    }

    @Test func completedItemsCountForDone() throws {
        var (s, _) = try Self.session(
            completed: [
                CompletedItem(item: 0, status: .imported, photo: S.uuid(100)), CompletedItem(item: 2, status: .queued),
            ])
        _ = try s.receive(R.start(1))
        _ = try s.receive(R.data(1, at: 0, 10))
        _ = try s.receive(R.end(1))
        #expect(try s.receive(R.done) == .senderDone)
        #expect(s.state == .finished)
    }

    @Test func doneStillNeedsTheOtherItems() throws {
        var (s, _) = try Self.session(completed: [CompletedItem(item: 0, status: .imported)])
        _ = try s.receive(R.start(2))
        _ = try s.receive(R.end(2))
        #expect(Self.outcome(&s, R.done) == "protocol_violation")  // item 1 never sent
    }

    @Test func itemStartForACompletedItemIsRefused() throws {
        for offset: Int64 in [0, 5] {
            var (s, _) = try Self.session(completed: [CompletedItem(item: 1, status: .queued)])
            #expect(Self.outcome(&s, R.start(1, offset: offset)) == "protocol_violation")
        }
    }

    // MARK: sender: Decision.validate

    @Test(
        arguments: [
            ("accepted, no lists", Decision(offer: "o", decision: .accepted), "ok"),
            (
                "both lists",
                Decision(
                    offer: "o", decision: .accepted, resume: [ResumePoint(item: 0, offset: 149_999)],
                    completed: [
                        CompletedItem(item: 1, status: .imported, photo: WireTestSupport.uuid(3)),
                        CompletedItem(item: 2, status: .queued),
                    ]),
                "ok"
            ),
            ("empty lists", Decision(offer: "o", decision: .accepted, resume: [], completed: []), "ok"),
            (
                "offset 0", Decision(offer: "o", decision: .accepted, resume: [ResumePoint(item: 0, offset: 0)]),
                "protocol_violation"
            ),
            (
                "offset == size",
                Decision(offer: "o", decision: .accepted, resume: [ResumePoint(item: 0, offset: 150_000)]),
                "protocol_violation"
            ),
            (
                "offset > size", Decision(offer: "o", decision: .accepted, resume: [ResumePoint(item: 1, offset: 11)]),
                "protocol_violation"
            ),
            (
                "negative offset",
                Decision(offer: "o", decision: .accepted, resume: [ResumePoint(item: 0, offset: -5)]),
                "protocol_violation"
            ),
            (
                "resume an empty item",
                Decision(offer: "o", decision: .accepted, resume: [ResumePoint(item: 2, offset: 1)]),
                "protocol_violation"
            ),
            (
                "resume index too big",
                Decision(offer: "o", decision: .accepted, resume: [ResumePoint(item: 3, offset: 1)]),
                "protocol_violation"
            ),
            (
                "resume index negative",
                Decision(offer: "o", decision: .accepted, resume: [ResumePoint(item: -1, offset: 1)]),
                "protocol_violation"
            ),
            (
                "resume twice",
                Decision(
                    offer: "o", decision: .accepted,
                    resume: [ResumePoint(item: 0, offset: 1), ResumePoint(item: 0, offset: 2)]),
                "protocol_violation"
            ),
            (
                "completed twice",
                Decision(
                    offer: "o", decision: .accepted,
                    completed: [CompletedItem(item: 1, status: .imported), CompletedItem(item: 1, status: .queued)]),
                "protocol_violation"
            ),
            (
                "in both lists",
                Decision(
                    offer: "o", decision: .accepted, resume: [ResumePoint(item: 0, offset: 1)],
                    completed: [CompletedItem(item: 0, status: .imported)]),
                "protocol_violation"
            ),
            (
                "completed failed",
                Decision(offer: "o", decision: .accepted, completed: [CompletedItem(item: 0, status: .failed)]),
                "protocol_violation"
            ),
            (
                "completed held",
                Decision(offer: "o", decision: .accepted, completed: [CompletedItem(item: 0, status: .held)]),
                "protocol_violation"
            ),
            (
                "completed out of range",
                Decision(offer: "o", decision: .accepted, completed: [CompletedItem(item: 3, status: .queued)]),
                "protocol_violation"
            ),
            (
                "completed bad photo id",
                Decision(
                    offer: "o", decision: .accepted,
                    completed: [CompletedItem(item: 0, status: .imported, photo: "../x")]),
                "protocol_violation"
            ),
        ] as [(String, Decision, String)])
    func validate(_ name: String, _ decision: Decision, _ expected: String) {
        #expect(S.outcome { try decision.validate(itemSizes: R.sizes) } == expected, "\(name)")
    }

    // MARK: JSON

    @Test func roundTripWithTheNewFields() throws {
        let d = Decision(
            offer: R.id, decision: .accepted, resume: [ResumePoint(item: 2, offset: 1_048_576)],
            completed: [
                CompletedItem(item: 0, status: .imported, photo: S.uuid(4)), CompletedItem(item: 1, status: .queued),
            ],
            receipt: Array(0..<64))
        let bytes = try WireMessage.decision(d).encoded()
        #expect(try WireMessage.decode(bytes) == .decision(d))
        let json = String(decoding: bytes.dropFirst(), as: UTF8.self)
        #expect(json.contains(#""resume":[{"item":2,"offset":1048576}]"#))
        #expect(
            json.contains(
                #""completed":[{"item":0,"photo":"\#(S.uuid(4))","status":"imported"},{"item":1,"status":"queued"}]"#))
        #expect(json.contains(#""receipt":"\#(Data(Array(0..<64) as [UInt8]).base64EncodedString())""#))
    }

    /// The design's own example decodes as written.
    @Test func designExample() throws {
        let body = #"""
            {"offer": "o", "decision": "accepted",
             "resume":    [{"item": 2, "offset": 1048576}],
             "completed": [{"item": 0, "status": "imported", "photo": "uuid"}, {"item": 1, "status": "queued"}]}
            """#
        let m = try WireMessage.decode([0x02] + Array(body.utf8))
        #expect(
            m
                == .decision(
                    Decision(
                        offer: "o", decision: .accepted, resume: [ResumePoint(item: 2, offset: 1_048_576)],
                        completed: [
                            CompletedItem(item: 0, status: .imported, photo: "uuid"),
                            CompletedItem(item: 1, status: .queued),
                        ])))
    }

    @Test func absentFieldsDecodeAsNil() throws {
        let m = try WireMessage.decode([0x02] + Array(#"{"offer":"o","decision":"accepted"}"#.utf8))
        guard case .decision(let d) = m else {
            Issue.record("not a DECISION")
            return
        }
        #expect(d.resume == nil)
        #expect(d.completed == nil)
        #expect(d.receipt == nil)
        let nulls = try WireMessage.decode(
            [0x02] + Array(#"{"offer":"o","decision":"accepted","resume":null,"completed":null,"receipt":null}"#.utf8))
        #expect(nulls == m)
    }

    @Test(arguments: [
        #"{"offer":"o","decision":"accepted","resume":{}}"#,
        #"{"offer":"o","decision":"accepted","resume":[{"item":0}]}"#,
        #"{"offer":"o","decision":"accepted","resume":[{"item":"0","offset":1}]}"#,
        #"{"offer":"o","decision":"accepted","resume":[{"item":0,"offset":1.5}]}"#,
        #"{"offer":"o","decision":"accepted","completed":[{"item":0,"status":"done"}]}"#,
        #"{"offer":"o","decision":"accepted","completed":[{"item":0}]}"#,
        #"{"offer":"o","decision":"accepted","completed":[7]}"#,
        #"{"offer":"o","decision":"accepted","receipt":"!!"}"#,
        #"{"offer":"o","decision":"accepted","receipt":64}"#,
    ])
    func malformedNewFields(_ body: String) {
        #expect(S.outcome { _ = try WireMessage.decode([0x02] + Array(body.utf8)) } == "protocol_violation")
    }

    @Test func heldStatus() throws {
        let m = WireMessage.itemResult(ItemResult(offer: R.id, item: 0, status: .held))
        let bytes = try m.encoded()
        #expect(String(decoding: bytes.dropFirst(), as: UTF8.self).contains(#""status":"held""#))
        #expect(try WireMessage.decode(bytes) == m)
    }
}
