// The one way sizes are written for people (CLI, notifications, messages).
import LocafotoControl
import Testing

@Suite("sizes as people read them")
struct ByteSizeTests {
    @Test("1024-based units are spelled KiB, MiB, GiB (never MB)")
    func units() {
        #expect(ByteSize.text(0) == "0 B")
        #expect(ByteSize.text(1023) == "1023 B")
        #expect(ByteSize.text(1024) == "1.0 KiB")
        #expect(ByteSize.text(38 << 20) == "38.0 MiB")
        #expect(ByteSize.text(1_468_006) == "1.4 MiB")
        #expect(ByteSize.text(3 << 30) == "3.0 GiB")
    }
}
