import GRDB

extension Catalog {
    /// Migration "v2-keys": named shared keys (`.lfs`, seed 001) and which photos came from
    /// which key. Frozen once released: add new migrations, never edit this one.
    ///
    ///     sharedKey       name TEXT PRIMARY KEY   exact (BINARY) bytes: case-sensitive, 1…128 bytes
    ///                     fingerprint TEXT        first 8 bytes of SHA-256(key), lowercase hex
    ///                     wrappedKey BLOB         KeyWrap under the master key,
    ///                                             aad "locafoto shared key v1:" ‖ UTF-8 name
    ///                     createdDate DATETIME
    ///     photoSourceKey  photoId TEXT PRIMARY KEY  the photo imported from an .lfs file
    ///                     keyName TEXT              the header's key name (as stored in sharedKey)
    ///                     keyFingerprint TEXT       fingerprint of the key that decrypted it
    ///
    /// `photoSourceKey` has no foreign keys on purpose: its row is written just before the photo
    /// is committed and outlives a forced key deletion (provenance); readers join with `photo`,
    /// so rows of photos that were deleted or never committed are ignored.
    static func registerKeys(_ m: inout DatabaseMigrator) {
        m.registerMigration("v2-keys") { db in
            try db.create(table: "sharedKey") { t in
                t.primaryKey("name", .text)
                t.column("fingerprint", .text).notNull()
                t.column("wrappedKey", .blob).notNull()
                t.column("createdDate", .datetime).notNull()
            }
            try db.create(table: "photoSourceKey") { t in
                t.primaryKey("photoId", .text)
                t.column("keyName", .text).notNull()
                t.column("keyFingerprint", .text).notNull()
            }
            try db.create(index: "photoSourceKey_on_keyName", on: "photoSourceKey", columns: ["keyName"])
        }
    }
}
