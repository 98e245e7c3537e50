import LocafotoCrypto
import LocafotoErrors
import Testing

@Suite("secretstream and subkeys")
struct SecretStreamTests {
    @Test func roundTripWithAssociatedDataAndFinalTag() throws {
        let key = SecretBytes(randomCount: 32)
        let w = try SecretStream.Writer(key: key)
        let a = w.push(Array("first".utf8), ad: Array("header".utf8))
        let b = w.push([], tag: .message)
        let c = w.push(Array("last".utf8), tag: .final)
        let r = try SecretStream.Reader(key: key, header: w.header)
        #expect(try r.pull(a, ad: Array("header".utf8)).message == Array("first".utf8))
        #expect(try r.pull(b).message == [])
        let end = try r.pull(c)
        #expect(end.tag == .final && end.message == Array("last".utf8))
        #expect(r.finished)
        #expect(throws: CryptoError.self) { try r.pull(c) }  // nothing after the end
    }

    @Test func reorderedAlteredOrWrongKeyStreamsFail() throws {
        let key = SecretBytes(randomCount: 32)
        let w = try SecretStream.Writer(key: key)
        let a = w.push([1, 2, 3])
        let b = w.push([4, 5, 6], tag: .final)
        // Reordered.
        let r1 = try SecretStream.Reader(key: key, header: w.header)
        #expect(throws: CryptoError.self) { try r1.pull(b) }
        // Altered.
        var bad = a
        bad[bad.count - 1] ^= 1
        #expect(throws: CryptoError.self) { try SecretStream.Reader(key: key, header: w.header).pull(bad) }
        // Wrong associated data or wrong key.
        #expect(throws: CryptoError.self) { try SecretStream.Reader(key: key, header: w.header).pull(a, ad: [9]) }
        #expect(throws: CryptoError.self) {
            try SecretStream.Reader(key: SecretBytes(randomCount: 32), header: w.header).pull(a)
        }
        // Truncated message.
        #expect(throws: CryptoError.self) {
            try SecretStream.Reader(key: key, header: w.header).pull(Array(a.prefix(10)))
        }
    }

    @Test func subkeysAreDeterministicAndSeparated() {
        let master = SecretBytes(randomCount: 32)
        let a = SecretStream.deriveKey(from: master, id: 1, context: "LOCABAK1")
        #expect(a.constantTimeEquals(SecretStream.deriveKey(from: master, id: 1, context: "LOCABAK1")))
        #expect(!a.constantTimeEquals(SecretStream.deriveKey(from: master, id: 2, context: "LOCABAK1")))
        #expect(!a.constantTimeEquals(SecretStream.deriveKey(from: master, id: 1, context: "OTHERCTX")))
        #expect(!a.constantTimeEquals(master))
    }
}
