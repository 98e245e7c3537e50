import ArgumentParser
import Foundation
import LocafotoAgent
import LocafotoControl

struct DoctorCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor", abstract: "Explain what discovery sees and why a peer may be missing.",
        discussion:
            "Checks avahi-daemon, this node's own advertisement as resolved back, the network interfaces (container/VM/VPN ones are skipped), static peers, and prints firewall and network hints."
    )
    @OptionGroup var global: GlobalOptions

    func run() throws {
        let answer = try global.fetch(DoctorReport.self, "/v1/doctor")
        if global.json { return global.printJSON(answer) }
        let r = answer.value
        print("\(r.name)  \(r.fingerprint)  TCP port \(r.port)")
        for c in r.checks {
            print("\(c.ok ? "ok  " : "FAIL") \(c.name): \(c.detail)")
        }
        print("interfaces:")
        for i in r.interfaces {
            var notes: [String] = []
            if !i.up { notes.append("down") }
            if !i.multicast { notes.append("no multicast") }
            if i.skipped { notes.append("skipped") }
            print(
                "  \(i.name)  \(i.addresses.joined(separator: " "))\(notes.isEmpty ? "" : "  (" + notes.joined(separator: ", ") + ")")"
            )
        }
        if !r.staticPeers.isEmpty { print("static peers: \(r.staticPeers.joined(separator: ", "))") }
        print("peers online: \(r.peersOnline)")
        for h in r.hints { print("hint: \(h)") }
    }
}
