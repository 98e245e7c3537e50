import LocafotoCrypto

extension SecretBytes {
    /// A passphrase a request gave, as the vault takes it: its UTF-8 bytes moved into the secret
    /// (the copy zeroed). The request's body is zeroed by its route.
    package static func utf8(_ text: String) -> SecretBytes {
        var bytes = Array(text.utf8)
        return SecretBytes(consuming: &bytes)
    }
}
