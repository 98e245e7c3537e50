import Foundation
import Glibc
import LocafotoControl
import NIOCore
import Testing

@testable import LocafotoSending
@testable import LocafotoTransfers

/// What a transfer says when its connection is lost (issue 42: it said
/// `read(descriptor:pointer:size:): Connection reset by peer) (errno: 104)`).
@Suite struct LostConnectionTests {
    @Test func aResetIsSaidAsWhoClosedItDuringWhichPhoto() {
        let s = TransferSnapshot(
            id: "t", peer: PeerRef(name: "bob", fingerprint: nil), state: .sending,
            items: [
                .init(name: "IMG_0006.jpg", bytes: 10, status: .imported),
                .init(name: "IMG_0007.jpg", bytes: 10, status: .sending),
            ], sentBytes: 15, totalBytes: 20, startedAt: Date(timeIntervalSince1970: 0))
        let reset = IOError(errnoCode: ECONNRESET, reason: "read(descriptor:pointer:size:)")
        #expect(Sender.lostConnection(reset, in: s) == "bob's agent closed the connection while sending IMG_0007.jpg")
        struct Other: Error {}
        #expect(Sender.lostConnection(Other(), in: s) == nil)
    }
}
