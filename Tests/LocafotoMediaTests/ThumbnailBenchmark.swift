import Dispatch
import Foundation
import LocafotoFormats
import Testing

@testable import LocafotoMedia

/// A benchmark, not a test: runs only when LOCAFOTO_BENCH_DIR names a directory of JPEGs
/// (scripts/bench-thumbnails.sh makes 100 photos of 12 MP and sets it). Prints "bench:" lines.
@Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["LOCAFOTO_BENCH_DIR"] != nil))
struct ThumbnailBenchmark {
    func load() throws -> [[UInt8]] {
        let dir = URL(fileURLWithPath: ProcessInfo.processInfo.environment["LOCAFOTO_BENCH_DIR"]!)
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".jpg") }.sorted()
        return try names.map { try Array(Data(contentsOf: dir.appendingPathComponent($0))) }
    }

    func report(_ label: String, _ ms: [Double], bytes: Int) {
        let s = ms.sorted()
        let mean = s.reduce(0, +) / Double(s.count)
        func f(_ v: Double) -> String { String(format: "%.1f", v) }
        print("bench: \(label): \(s.count) photos, mean \(f(mean)) ms/photo, median \(f(s[s.count / 2])), p95 \(f(s[min(s.count - 1, s.count * 95 / 100)])), min \(f(s[0])), max \(f(s[s.count - 1])); output \(bytes / s.count) bytes/photo")
    }

    func time(_ photos: [[UInt8]], _ op: ([UInt8]) throws -> [UInt8]) rethrows -> ([Double], Int) {
        var ms: [Double] = []
        var bytes = 0
        for p in photos {
            let t0 = DispatchTime.now().uptimeNanoseconds
            let out = try op(p)
            ms.append(Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e6)
            bytes += out.count
        }
        return (ms, bytes)
    }

    @Test func thumbnails() throws {
        let photos = try load()
        try #require(!photos.isEmpty)
        let inBytes = photos.reduce(0) { $0 + $1.count }
        let m = try photos[0].metadata(.jpeg)
        print("bench: input \(photos.count) JPEGs of \(m.width!)x\(m.height!), \(inBytes / photos.count) bytes/photo, in memory")
        _ = try photos[0].thumbnail()  // libvips initialisation, not timed

        let (t, tb) = try time(photos) { try $0.thumbnail() }
        report("thumbnail 320 q80 (1 thread)", t, bytes: tb)
        let (m1, mb) = try time(photos) { _ = try $0.metadata(.jpeg); return [] }
        report("metadata (1 thread)", m1, bytes: mb)
        let (c, cb) = try time(photos) { try $0.compressed(.jpeg) }
        report("compress 1500 q75 (1 thread)", c, bytes: cb)
        let (s, sb) = try time(photos) { try Media.strippingLocation(from: $0, type: .jpeg) }
        report("strippingLocation (1 thread)", s, bytes: sb)

        let threads = ProcessInfo.processInfo.activeProcessorCount
        let t0 = DispatchTime.now().uptimeNanoseconds
        DispatchQueue.concurrentPerform(iterations: photos.count) { k in _ = try? photos[k].thumbnail() }
        let wall = Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e6
        print("bench: thumbnail 320 q80 (\(threads) threads): \(String(format: "%.1f", wall / Double(photos.count))) ms/photo wall-clock throughput")
    }
}
