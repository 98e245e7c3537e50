import Foundation

/// The checkout the tests were built from, and the files in it that tests read: the protocol's
/// vectors (`protocol/vectors`, made by independent code; read with `Vector`) and the scripts
/// some tests run. One place for every test target, instead of a search for Package.swift in each.
public enum Checkout {
    /// The package root: the nearest folder above this file that holds Package.swift.
    public static let root: URL = {
        var url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while url.path != "/" {
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { return url }
            url.deleteLastPathComponent()
        }
        fatalError("no Package.swift above \(#filePath)")
    }()

    /// A file of the checkout, by its path from the root (`scripts/avahi-lo.sh`).
    public static func url(_ path: String) -> URL { root.appendingPathComponent(path) }

    /// A file of `protocol/vectors`.
    public static func vectorURL(_ file: String) -> URL { url("protocol/vectors/" + file) }
}
