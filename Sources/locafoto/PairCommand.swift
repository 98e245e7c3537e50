import ArgumentParser
import Foundation
import LocafotoControl

struct PairCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pair", abstract: "Show a pairing code to compare with a peer before trusting it.",
        discussion: """
            `locafoto pair bob` runs a fresh handshake with bob and prints a 6-digit code; bob runs \
            `locafoto pair` (no argument) and sees the same code next to your name. If the codes match \
            (compare them in person or by phone), nobody sits between you: `locafoto trust bob`. If \
            they differ, do not trust: someone may be intercepting the connection.
            """)
    @OptionGroup var global: GlobalOptions
    @Argument(
        help: "Peer to pair with (name, fingerprint prefix or HOST:PORT); omit to list recent codes.",
        completion: Completions.peers) var peer: String?

    func run() throws {
        if let peer {
            let q = peer.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? peer
            let answer = try global.fetch(PairingCode.self, "/v1/peers/\(q)/pair", method: "POST")
            if global.json { return global.printJSON(answer) }
            let r = answer.value
            print("pairing code with \(r.name) [\(r.fingerprint)]:  \(r.code)")
            // Trust by fingerprint: it names exactly the key that was just compared (a name or
            // an address might later answer with another).
            let fingerprint = r.fingerprint
            let prefix = fingerprint.split(separator: "-").first.map(String.init) ?? fingerprint
            print("Ask them to run `locafoto pair`; if they see the same code, `locafoto trust \(prefix)`.")
        } else {
            try global.printList(
                PairingCode.self, "/v1/pairing",
                empty: "No handshake in the last 10 minutes; the peer runs `locafoto pair YOUR-NAME` first.",
                ["CODE", "PEER", "FINGERPRINT", "WHEN"]
            ) { [$0.code, $0.name, $0.fingerprint, Format.age($0.handshakeAt)] }
        }
    }
}
