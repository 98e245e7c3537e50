import ArgumentParser
import Foundation
import LocafotoControl
import LocafotoCrypto

/// `locafoto localsend [on|off|trust|untrust|forget]`: phones and other apps that speak
/// LocalSend v2, off until asked for.
struct LocalSendCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "localsend",
        abstract: "Receive photos from LocalSend apps (phones, other computers): show, turn on or off.",
        discussion: """
            Off by default. `on` opens LocalSend's HTTPS port (53317, or the agent's --localsend-port) on this \
            machine's addresses and keeps it open across restarts; `off` closes it. A LocalSend device is only as \
            sure as the first time it was seen (its certificate's fingerprint, learnt from the network): its offers \
            wait in the inbox as "LocalSend, not verified" until you accept them, unless you trust that device \
            (`localsend trust ALIAS`). A device whose name is known with another certificate is refused; if it was \
            reinstalled, `localsend forget` the old one. Only photos are taken; other files are refused one by one.
            """,
        subcommands: [
            Show.self, On.self, Off.self, PIN.self, VerbCommand<TrustDevice>.self, VerbCommand<UntrustDevice>.self,
            VerbCommand<ForgetDevice>.self,
        ],
        defaultSubcommand: Show.self)

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "status", abstract: "Show whether LocalSend is on, and the devices met.")
        @OptionGroup var global: GlobalOptions

        func run() throws {
            try LocalSendCommand.show(try global.fetch(LocalSendStatus.self, "/v1/localsend"), global)
        }
    }

    struct On: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Turn LocalSend on: its HTTPS port opens, now and at every start.")
        @OptionGroup var global: GlobalOptions

        func run() throws {
            try LocalSendCommand.switchTo(true, global)
        }
    }

    struct Off: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Turn LocalSend off: nothing of it listens, now and at every start.")
        @OptionGroup var global: GlobalOptions

        func run() throws {
            try LocalSendCommand.switchTo(false, global)
        }
    }

    struct PIN: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "pin",
            abstract: "Ask LocalSend senders for a PIN (typed at a prompt, or read from --pin-file), or --clear it.")
        @OptionGroup var global: GlobalOptions
        @Option(help: ArgumentHelp("A file whose first line is the PIN.", valueName: "file")) var pinFile: String?
        @Flag(help: "No PIN is asked any more.") var clear = false

        func run() throws {
            var pin = ""
            if !clear {
                let secret = try Passphrase.obtain(file: pinFile, prompt: "LocalSend PIN: ", environment: false)
                pin = secret.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
            }
            let r = try global.fetch(
                LocalSendStatus.self, "/v1/localsend", method: "PUT", body: LocalSendSwitchRequest(pin: pin))
            global.say(r) { $0.pinRequired ? "LocalSend senders must give the PIN" : "LocalSend senders need no PIN" }
        }
    }

    enum TrustDevice: Verb {
        static let configuration = CommandConfiguration(
            commandName: "trust", abstract: "Trust a LocalSend device: its offers are accepted without asking.")
        static func run(_ t: DeviceName, _ global: GlobalOptions) throws { try change(t, .trust, global) }
    }

    enum UntrustDevice: Verb {
        static let configuration = CommandConfiguration(
            commandName: "untrust", abstract: "Stop trusting a LocalSend device: its offers wait for you again.")
        static func run(_ t: DeviceName, _ global: GlobalOptions) throws { try change(t, .untrust, global) }
    }

    enum ForgetDevice: Verb {
        static let configuration = CommandConfiguration(
            commandName: "forget", abstract: "Forget a LocalSend device (e.g. reinstalled, with a new certificate).")
        static func run(_ t: DeviceName, _ global: GlobalOptions) throws { try change(t, .forget, global) }
    }

    static func switchTo(_ on: Bool, _ global: GlobalOptions) throws {
        let r = try global.fetch(
            LocalSendStatus.self, "/v1/localsend", method: "PUT", body: LocalSendSwitchRequest(enabled: on))
        if on, let problem = r.value.problem, !global.json {
            throw CLIError("LocalSend is on, but its port could not open: \(problem)", code: .unavailable)
        }
        try show(r, global)
    }

    static func change(_ target: DeviceName, _ action: TrustChange, _ global: GlobalOptions) throws {
        let device = target.device
        let path =
            "/v1/localsend/devices/\(device.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? device)/\(action.rawValue)"
        let r = try global.fetch(LocalSendStatus.Device.self, path, method: "POST")
        global.say(r) { d in
            switch action {
            case .trust: "trusted LocalSend device \(d.alias) [\(d.fingerprint)]"
            case .untrust: "\(d.alias) [\(d.fingerprint)] is LocalSend, not verified, again"
            case .forget: "forgot LocalSend device \(d.alias) [\(d.fingerprint)]"
            }
        }
    }

    static func show(_ r: Answer<LocalSendStatus>, _ global: GlobalOptions) throws {
        if global.json { return global.printJSON(r) }
        let s = r.value
        switch (s.enabled, s.port) {
        case (false, _): print("LocalSend: off (nothing of it listens; `locafoto localsend on` opens it)")
        case (true, let port?): print("LocalSend: on, HTTPS port \(port), as \"\(s.alias)\"")
        case (true, nil): print("LocalSend: on, not listening: \(s.problem ?? "starting")")
        }
        if let fp = s.fingerprint { print("certificate: \(fp)") }
        if s.pinRequired { print("senders must give the PIN (`locafoto localsend pin --clear` removes it)") }
        if !s.devices.isEmpty { print("devices that sent to this node:") }
        for d in s.devices {
            let trust = d.trust == .trusted ? "trusted" : "LocalSend, not verified"
            print("  \(d.alias)  \(d.deviceModel ?? "")  [\(d.fingerprint.prefix(16))…]  \(trust)")
        }
        if !s.nearby.isEmpty { print("heard on the network:") }
        for n in s.nearby {
            print("  \(n.alias)  \(n.deviceModel ?? "")  \(n.address):\(n.port.map(String.init) ?? "53317")")
        }
    }
}
