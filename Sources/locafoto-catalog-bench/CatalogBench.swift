import Dispatch
import Foundation
import LocafotoCrypto
import LocafotoQuery
import LocafotoVault

/// `locafoto-catalog-bench VAULT PASSPHRASE-FILE [RUNS]`: the sealed catalog at scale, through
/// the vault's public API. scripts/bench-catalog.sh fills VAULT's catalog with clear rows the
/// way a catalog of the previous version holds them, then runs this in release mode, which
/// times: the first unlock (sealing every row, then VACUUM), a later unlock (decrypting the
/// mirror), the memory the mirror takes, and every query kind of `list` (median and worst of
/// RUNS, after one warm-up). A benchmark: it prints numbers and asserts nothing.
@main
struct CatalogBench {
    static func main() throws {
        let args = CommandLine.arguments
        guard args.count == 3 || args.count == 4 else {
            FileHandle.standardError.write(Data("usage: locafoto-catalog-bench VAULT PASSPHRASE-FILE [RUNS]\n".utf8))
            exit(64)
        }
        let runs = args.count == 4 ? Int(args[3]) ?? 20 : 20
        var text = try String(contentsOfFile: args[2], encoding: .utf8)
        while text.hasSuffix("\n") { text.removeLast() }
        let passphrase = SecretBytes(copying: Array(text.utf8))
        let vault = try Vault.open(at: args[1])

        let rss0 = residentMiB()
        let first = try seconds { try vault.unlock(passphrase: passphrase) }
        print(String(format: "first unlock (Argon2id + sealing every clear row + VACUUM): %.2f s", first))
        vault.lock()
        let rssLocked = residentMiB()
        let again = try seconds { try vault.unlock(passphrase: passphrase) }
        let rssUnlocked = residentMiB()
        let kdf = seconds {
            vault.lock()
            _ = try? vault.unlock(passphrase: SecretBytes(copying: Array("not the passphrase".utf8)))
        }
        try vault.unlock(passphrase: passphrase)
        print(
            String(
                format:
                    "unlock (Argon2id + building the decrypted mirror): %.2f s; a wrong passphrase (Argon2id alone): %.2f s",
                again, kdf))
        print(
            String(
                format: "resident memory: %.0f MiB before, %.0f MiB locked, %.0f MiB unlocked (mirror: %.0f MiB)", rss0,
                rssLocked, rssUnlocked, rssUnlocked - rssLocked))

        let total = try vault.photoCount(matching: PhotoQuery(hidden: .include))
        print("photos: \(total)")
        let page = 100
        var cases: [(String, PhotoQuery)] = []
        for sort in PhotoQuery.Sort.allCases {
            for order in PhotoQuery.Order.allCases {
                cases.append(
                    ("sort \(sort.rawValue) \(order.rawValue)", PhotoQuery(sort: sort, order: order, limit: page)))
            }
        }
        cases += [
            ("sort importedAt, hidden included", PhotoQuery(sort: .importDate, hidden: .include, limit: page)),
            ("hidden only", PhotoQuery(hidden: .only, limit: page)),
            ("deep page (offset 50,000)", PhotoQuery(limit: page, offset: total / 2)),
            ("last page", PhotoQuery(limit: page, offset: max(0, total - page))),
            ("album of 10,000", PhotoQuery(album: "Everything 2019", limit: page)),
            ("album of 50", PhotoQuery(album: "Small", limit: page)),
            ("tag 'family' (~17%)", PhotoQuery(tag: "family", limit: page)),
            ("tag 'rare-tag' (~0.03%)", PhotoQuery(tag: "rare-tag", limit: page)),
            ("favourites (5%)", PhotoQuery(favorite: true, limit: page)),
            ("favourites by size", PhotoQuery(sort: .size, favorite: true, limit: page)),
            ("date range: one month", PhotoQuery(from: date("2020-03-01"), before: date("2020-04-01"), limit: page)),
            ("format png (8%)", PhotoQuery(format: "png", limit: page)),
            ("sender", PhotoQuery(senderFingerprint: "ABCDE-FGHIJ-00003", limit: page)),
            ("text 'IMG_12' (name)", PhotoQuery(text: "IMG_12", limit: page)),
            ("text 'sunse' (tag)", PhotoQuery(text: "sunse", limit: page)),
            (
                "album + tag + favourite",
                PhotoQuery(album: "Everything 2019", tag: "family", favorite: true, limit: page)
            ),
        ]
        print(
            String(
                format: "%-36@ %9@ %9@ %6@", "query (first page of 100)" as NSString, "median ms" as NSString,
                "max ms" as NSString, "rows" as NSString))
        for (label, query) in cases {
            var rows = try vault.photos(matching: query).count
            let times = try (0..<runs).map { _ in try milliseconds { rows = try vault.photos(matching: query).count } }
            print(String(format: "%-36@ %9.2f %9.2f %6d", label as NSString, median(times), times.max() ?? 0, rows))
        }
        for (label, query) in [
            ("count (default filter)", PhotoQuery()), ("count (tag 'family')", PhotoQuery(tag: "family")),
        ] {
            var n = try vault.photoCount(matching: query)
            let times = try (0..<runs).map { _ in try milliseconds { n = try vault.photoCount(matching: query) } }
            print(String(format: "%-36@ %9.2f %9.2f %6d", label as NSString, median(times), times.max() ?? 0, n))
        }
        let tagTimes = try (0..<runs).map { _ in try milliseconds { _ = try vault.allTags() } }
        print(
            String(format: "%-36@ %9.2f %9.2f", "tags with counts" as NSString, median(tagTimes), tagTimes.max() ?? 0))
        let id = try vault.photos(matching: PhotoQuery(limit: 1))[0].id
        let favTimes = try (0..<runs).map { i in try milliseconds { _ = try vault.setFavorite(i % 2 == 0, for: [id]) } }
        print(
            String(
                format: "%-36@ %9.2f %9.2f", "favourite one photo (write)" as NSString, median(favTimes),
                favTimes.max() ?? 0))
        let tagAll = try seconds { _ = try vault.addTags(["bench"], to: .query(PhotoQuery(hidden: .include))) }
        print(String(format: "tag every photo (one transaction, every record sealed again): %.2f s", tagAll))
    }

    static func date(_ day: String) -> Date {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withFullDate]
        return f.date(from: day)!
    }

    static func seconds(_ body: () throws -> Void) rethrows -> Double {
        let t0 = DispatchTime.now().uptimeNanoseconds
        try body()
        return Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e9
    }

    static func milliseconds(_ body: () throws -> Void) rethrows -> Double { try seconds(body) * 1000 }

    static func median(_ xs: [Double]) -> Double {
        let s = xs.sorted()
        return s.isEmpty ? 0 : s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }

    /// VmRSS of this process, from /proc/self/status.
    static func residentMiB() -> Double {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kb = line.split(separator: " ").dropFirst().first.flatMap({ Double($0) })
        else { return 0 }
        return kb / 1024
    }
}
