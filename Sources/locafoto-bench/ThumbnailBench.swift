import Dispatch
import Foundation
import LocafotoErrors
import LocafotoFormats
import LocafotoMedia

/// `locafoto-bench DIR`: times thumbnail, metadata, compression and location removal over the
/// JPEGs in DIR, in memory (as the agent's media indexer and `send --compress` run them).
/// A benchmark, not a test: it prints numbers and asserts nothing. scripts/bench-thumbnails.sh
/// makes the photos and runs it in release mode.
@main
struct ThumbnailBench {
    static func main() throws {
        guard CommandLine.arguments.count == 2 else {
            FileHandle.standardError.write(Data("usage: locafoto-bench DIR-OF-JPEGS\n".utf8))
            exit(64)
        }
        let dir = URL(fileURLWithPath: CommandLine.arguments[1])
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".jpg") }
            .sorted()
        let photos = try names.map { try Array(Data(contentsOf: dir.appendingPathComponent($0))) }
        guard !photos.isEmpty else { throw MediaError(.invalidOption, "no .jpg files in \(dir.path)") }
        let inBytes = photos.reduce(0) { $0 + $1.count }
        let m = try photos[0].withUnsafeBytes { try Media.metadata(of: $0, type: .jpeg) }
        print(
            "bench: input \(photos.count) JPEGs of \(m.width ?? 0)x\(m.height ?? 0), \(inBytes / photos.count) bytes/photo, in memory"
        )
        _ = try photos[0].withUnsafeBytes { try Media.thumbnail(of: $0) }  // libvips initialisation, not timed

        report(
            "thumbnail 320 q80 (1 thread)",
            try time(photos) { p in try p.withUnsafeBytes { try Media.thumbnail(of: $0) } })
        report(
            "metadata (1 thread)",
            try time(photos) { p in
                _ = try p.withUnsafeBytes { try Media.metadata(of: $0, type: .jpeg) }
                return []
            })
        report(
            "compress 1500 q75 (1 thread)",
            try time(photos) { p in try p.withUnsafeBytes { try Media.compress($0, type: .jpeg) } })
        report("strippingLocation (1 thread)", try time(photos) { try Media.strippingLocation(from: $0, type: .jpeg) })

        let threads = ProcessInfo.processInfo.activeProcessorCount
        let t0 = DispatchTime.now().uptimeNanoseconds
        DispatchQueue.concurrentPerform(iterations: photos.count) { k in
            _ = try? photos[k].withUnsafeBytes { try Media.thumbnail(of: $0) }
        }
        let wall = Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e6
        print(
            "bench: thumbnail 320 q80 (\(threads) threads): \(String(format: "%.1f", wall / Double(photos.count))) ms/photo wall-clock throughput"
        )
    }

    static func time(_ photos: [[UInt8]], _ op: ([UInt8]) throws -> [UInt8]) throws -> (ms: [Double], bytes: Int) {
        var ms: [Double] = []
        var bytes = 0
        for p in photos {
            let t0 = DispatchTime.now().uptimeNanoseconds
            bytes += try op(p).count
            ms.append(Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e6)
        }
        return (ms, bytes)
    }

    static func report(_ label: String, _ r: (ms: [Double], bytes: Int)) {
        let s = r.ms.sorted()
        let mean = s.reduce(0, +) / Double(s.count)
        func f(_ v: Double) -> String { String(format: "%.1f", v) }
        print(
            "bench: \(label): \(s.count) photos, mean \(f(mean)) ms/photo, median \(f(s[s.count / 2])), p95 \(f(s[min(s.count - 1, s.count * 95 / 100)])); output \(r.bytes / s.count) bytes/photo"
        )
    }
}
