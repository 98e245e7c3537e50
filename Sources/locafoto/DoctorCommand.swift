import ArgumentParser
import Foundation

struct DoctorCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor", abstract: "Explain what discovery sees and why a peer may be missing.",
        discussion: "Checks avahi-daemon, this node's own advertisement as resolved back, the network interfaces (container/VM/VPN ones are skipped), static peers, and prints firewall and network hints.")
    @OptionGroup var global: GlobalOptions

    func run() throws {
        try guarded {
            let r = try global.object("GET", "/v1/doctor")
            if global.json { return global.printJSON(r) }
            print("\(r["name"] ?? "")  \(r["fingerprint"] ?? "")  TCP port \(r["port"] ?? "")")
            for c in r["checks"] as? [[String: Any]] ?? [] {
                print("\((c["ok"] as? Bool ?? false) ? "ok  " : "FAIL") \(c["name"] ?? ""): \(c["detail"] ?? "")")
            }
            print("interfaces:")
            for i in r["interfaces"] as? [[String: Any]] ?? [] {
                var notes: [String] = []
                if !(i["up"] as? Bool ?? false) { notes.append("down") }
                if !(i["multicast"] as? Bool ?? false) { notes.append("no multicast") }
                if i["skipped"] as? Bool ?? false { notes.append("skipped") }
                print("  \(i["name"] ?? "")  \((i["addresses"] as? [String] ?? []).joined(separator: " "))\(notes.isEmpty ? "" : "  (" + notes.joined(separator: ", ") + ")")")
            }
            let statics = r["staticPeers"] as? [String] ?? []
            if !statics.isEmpty { print("static peers: \(statics.joined(separator: ", "))") }
            print("peers online: \(r["peersOnline"] ?? 0)")
            for h in r["hints"] as? [String] ?? [] { print("hint: \(h)") }
        }
    }
}
