import CFuzzer

#if canImport(Glibc)
    import Glibc
#endif

/// One libFuzzer input, called for every execution. Must not capture (it is a C function).
public typealias FuzzCallback = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt

/// Runs libFuzzer's driver with the process arguments (every libFuzzer flag works).
public func runFuzzer(
    _ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, _ callback: FuzzCallback
) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv, callback)
}

/// The input as an array (libFuzzer passes a null pointer for the empty input).
public func bytes(_ data: UnsafePointer<UInt8>?, _ size: Int) -> [UInt8] {
    guard let data, size > 0 else { return [] }
    return Array(UnsafeBufferPointer(start: data, count: size))
}

/// A property of the code under test. A violation aborts the process, so that libFuzzer
/// records the input as a crash (with this message on stderr).
public func check(
    _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
    file: StaticString = #fileID, line: UInt = #line
) {
    if !condition() {
        let text = "FUZZ PROPERTY VIOLATED (\(file):\(line)): \(message())\n"
        _ = text.withCString { write(2, $0, strlen($0)) }
        abort()
    }
}

/// Parsers must fail with their module's typed errors, never with something else.
public func checkError(
    _ error: any Error, isOneOf types: [any Error.Type], _ context: String,
    file: StaticString = #fileID, line: UInt = #line
) {
    let actual = ObjectIdentifier(type(of: error))
    check(
        types.contains { ObjectIdentifier($0) == actual },
        "\(context) threw \(type(of: error)) (\(error)); expected one of \(types.map { "\($0)" })", file: file,
        line: line)
}

/// Reads the input front to back: small fuzzer-chosen numbers and the rest as bytes.
public struct FuzzReader {
    public private(set) var bytes: ArraySlice<UInt8>

    public init(_ bytes: [UInt8]) { self.bytes = bytes[...] }

    public var isEmpty: Bool { bytes.isEmpty }

    public mutating func byte() -> UInt8 {
        bytes.popFirst() ?? 0
    }

    public mutating func u16() -> Int {
        Int(byte()) << 8 | Int(byte())
    }

    public mutating func take(_ n: Int) -> [UInt8] {
        let n = min(n, bytes.count)
        defer { bytes = bytes.dropFirst(n) }
        return Array(bytes.prefix(n))
    }

    public mutating func rest() -> [UInt8] {
        defer { bytes = [] }
        return Array(bytes)
    }
}

/// protocol/messages.md "Peer text", written out independently of LocafotoWire's `PeerText` so
/// that the targets check the library against the documented rule, not against itself: no Cc, Zl
/// or Zp, and no Cf but the joiners (U+200C, U+200D) and the tag characters (U+E0020–U+E007F).
public func isUnsafePeerText(_ s: Unicode.Scalar) -> Bool {
    switch s.properties.generalCategory {
    case .control, .lineSeparator, .paragraphSeparator: return true
    case .format: return !(s.value == 0x200C || s.value == 0x200D || (0xE0020...0xE007F).contains(s.value))
    default: return false
    }
}
