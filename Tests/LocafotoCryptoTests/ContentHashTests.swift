import CSodium
import Testing

@testable import LocafotoCrypto

/// The content hash comes from libsodium or libgcrypt, whichever is faster here: both must be
/// BLAKE2b-256 byte for byte, however the input is cut, and hashers must copy as values.
@Suite struct ContentHashTests {
    /// libsodium's one-shot BLAKE2b-256, the reference.
    static func reference(_ bytes: [UInt8]) -> [UInt8] {
        _ = sodium_init()
        var out = [UInt8](repeating: 0, count: 32)
        crypto_generichash(&out, 32, bytes, UInt64(bytes.count), nil, 0)
        return out
    }

    /// `n` bytes that are the same in every run (libsodium's seeded generator).
    static func bytes(_ n: Int, seed: UInt8) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: n)
        randombytes_buf_deterministic(&out, n, [UInt8](repeating: seed, count: Int(randombytes_SEEDBYTES)))
        return out
    }

    @Test("both backends are available and give the known BLAKE2b-256 answers", arguments: ContentHashBackend.allCases)
    func knownAnswers(_ backend: ContentHashBackend) {
        var empty = ContentHasher(backend: backend)
        #expect(empty.backend == backend)
        #expect(empty.finalize() == hex("0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3a8"))
        var abc = ContentHasher(backend: backend)
        abc.update(Array("abc".utf8))
        #expect(abc.finalize() == hex("bddd813c634239723171ef3fee98579b94964e3bb1cb3e427262c8c068d52319"))
    }

    @Test(
        "every length around the 128-byte block, and a large input cut at random, match libsodium",
        arguments: ContentHashBackend.allCases)
    func matchesLibsodium(_ backend: ContentHashBackend) {
        for n in [1, 127, 128, 129, 255, 256, 257, 1000] {
            let input = Self.bytes(n, seed: UInt8(truncatingIfNeeded: n))
            var h = ContentHasher(backend: backend)
            h.update(input)
            #expect(h.finalize() == Self.reference(input), "length \(n)")
        }
        let big = Self.bytes((1 << 20) + 3, seed: 7)
        let cuts = Self.bytes(64, seed: 11)  // piece sizes, 0 to ~65 KB
        var h = ContentHasher(backend: backend)
        var i = 0
        var k = 0
        while i < big.count {
            let n = min(Int(cuts[k % cuts.count]) * 256 + k % 7, big.count - i)
            k += 1
            h.update(big[i..<(i + n)])
            i += n
        }
        #expect(h.finalize() == Self.reference(big))
    }

    @Test("a copied hasher goes on independently of the original", arguments: ContentHashBackend.allCases)
    func copiesAreValues(_ backend: ContentHashBackend) {
        var a = ContentHasher(backend: backend)
        a.update(Array("photo ".utf8))
        var b = a
        a.update(Array("one".utf8))
        b.update(Array("two".utf8))
        var probe = a  // a digest of a copy leaves the original usable
        #expect(probe.finalize() == Self.reference(Array("photo one".utf8)))
        a.update(Array("!".utf8))
        #expect(a.finalize() == Self.reference(Array("photo one!".utf8)))
        #expect(b.finalize() == Self.reference(Array("photo two".utf8)))
    }

    @Test("the measured choice is one of the two and is kept")
    func fastest() {
        let first = ContentHashBackend.fastest
        #expect(ContentHashBackend.fastest == first)
        #expect(ContentHash.hasher().backend == first)
        #expect(ContentHash.of(Array("abc".utf8)) == Self.reference(Array("abc".utf8)))
    }
}
