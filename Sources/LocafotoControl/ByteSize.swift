import Foundation

/// Sizes as people read them here, in one place for the CLI, notifications and messages:
/// 1024-based units spelled as such (`1.4 MiB`, `512 B`). Foundation's ByteCountFormatter
/// counts in 1024s with `.binary` but still writes "MB".
public enum ByteSize {
    public static func text(_ n: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var v = Double(n)
        var u = 0
        while abs(v) >= 1024 && u < units.count - 1 {
            v /= 1024
            u += 1
        }
        return u == 0 ? "\(n) B" : String(format: "%.1f %@", v, units[u])
    }
}
