import Foundation
import LocafotoControl
import LocafotoCrypto

/// Where a passphrase comes from: a file named by an option or LOCAFOTO_PASSPHRASE_FILE, or the
/// terminal with echo off. Never from argv or the environment's value itself.
enum Passphrase {
    /// - Parameter environment: whether LOCAFOTO_PASSPHRASE_FILE applies (it names the vault's
    ///   passphrase, not an album's).
    /// A passphrase shorter than this draws a warning when it is chosen (`confirm`): Argon2id
    /// slows guessing, it does not make a short passphrase strong.
    static let recommendedLength = 12

    static func obtain(file: String?, prompt: String, confirm: Bool = false, environment: Bool = true) throws
        -> SecretBytes
    {
        let secret = try obtainOnce(file: file, prompt: prompt, confirm: confirm, environment: environment)
        if confirm { warnIfShort(secret) }
        return secret
    }

    static func warnIfShort(_ secret: SecretBytes) {
        let characters = secret.withUnsafeBytes { String(decoding: $0, as: UTF8.self).count }
        if characters < recommendedLength {
            writeStderr(
                "warning: this passphrase has \(characters) characters; use at least \(recommendedLength) (a few random words) so that a stolen vault cannot be guessed open\n"
            )
        }
    }

    private static func obtainOnce(file: String?, prompt: String, confirm: Bool, environment: Bool) throws
        -> SecretBytes
    {
        let fromEnvironment = environment ? ProcessInfo.processInfo.environment["LOCAFOTO_PASSPHRASE_FILE"] : nil
        if let path = file ?? fromEnvironment, !path.isEmpty {
            return try fromFile(path)
        }
        guard isatty(STDIN_FILENO) == 1 else {
            throw CLIError(
                "no passphrase: run this on a terminal, or give --passphrase-file FILE (or set LOCAFOTO_PASSPHRASE_FILE)",
                code: .invalidRequest)
        }
        let first = try readHidden(prompt)
        if confirm {
            let second = try readHidden("Repeat passphrase: ")
            guard first.constantTimeEquals(second) else {
                throw CLIError("the passphrases do not match", code: .invalidRequest)
            }
        }
        return first
    }

    static func fromFile(_ path: String) throws -> SecretBytes {
        var st = stat()
        if stat(path, &st) == 0, st.st_mode & (S_IRWXG | S_IRWXO) != 0 {
            writeStderr(
                "warning: the passphrase file \(path) can be read or changed by other users (mode \(String(st.st_mode & 0o777, radix: 8))); run `chmod 600 \(path)`\n"
            )
        }
        guard var data = FileManager.default.contents(atPath: path) else {
            throw CLIError("cannot read the passphrase file \(path)", code: .notFound)
        }
        defer { data.resetBytes(in: 0..<data.count) }
        var bytes = [UInt8](data)
        // One trailing newline is what `echo secret > file` leaves; it is not part of the passphrase.
        if bytes.last == 0x0a { bytes.removeLast() }
        if bytes.last == 0x0d { bytes.removeLast() }
        guard !bytes.isEmpty else { throw CLIError("the passphrase file \(path) is empty", code: .invalidRequest) }
        return SecretBytes(consuming: &bytes)
    }

    private static func readHidden(_ prompt: String) throws -> SecretBytes {
        writeStderr(prompt)
        var old = termios()
        tcgetattr(STDIN_FILENO, &old)
        var quiet = old
        quiet.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet)
        defer {
            tcsetattr(STDIN_FILENO, TCSAFLUSH, &old)
            FileHandle.standardError.write(Data("\n".utf8))
        }
        var bytes: [UInt8] = []
        var c: UInt8 = 0
        while read(STDIN_FILENO, &c, 1) == 1, c != 0x0a {
            bytes.append(c)
            guard bytes.count <= 4096 else { break }
        }
        guard !bytes.isEmpty else { throw CLIError("an empty passphrase is not allowed", code: .invalidRequest) }
        return SecretBytes(consuming: &bytes)
    }
}
