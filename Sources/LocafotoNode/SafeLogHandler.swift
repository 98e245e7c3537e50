import Foundation
import LocafotoWire
import Logging

/// The agent's log on standard error, one event per line. Messages quote peers (names, their
/// DECISION and ERROR texts), so every message and metadata value goes through
/// `PeerText.escaped`: a peer cannot clear the screen of whoever tails the log, nor forge a
/// line of its own with a newline.
public struct SafeLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    private let label: String

    public init(label: String) {
        self.label = label
    }

    /// Installs it for every logger of the process (call once, first thing).
    public static func bootstrap() {
        LoggingSystem.bootstrap { SafeLogHandler(label: $0) }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        print(Self.line(event, label: label, metadata: metadata))
    }

    /// `2026-11-24T10:00:00Z info locafoto: message key=value`, everything escaped.
    package static func line(_ event: LogEvent, label: String, metadata: Logger.Metadata) -> String {
        var all = metadata
        if let extra = event.metadata { all.merge(extra) { $1 } }
        let meta =
            all.isEmpty
            ? "" : " " + all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        let time = Date().formatted(.iso8601)
        return PeerText.escaped("\(time) \(event.level) \(label): \(event.message)\(meta)")
    }

    private func print(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
