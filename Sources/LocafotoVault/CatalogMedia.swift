import GRDB

extension Catalog {
    /// v2-media: what the media indexer learns from each photo (EXIF, thumbnail). `mediaState`:
    /// 0 = not looked at yet, 1 = indexed, 2 = could not be read (e.g. too large, undecodable).
    static func registerMedia(_ m: inout DatabaseMigrator) {
        m.registerMigration("v2-media") { db in
            try db.alter(table: "photo") { t in
                t.add(column: "orientation", .integer)
                t.add(column: "cameraMake", .text)
                t.add(column: "cameraModel", .text)
                t.add(column: "hasLocation", .boolean)
                t.add(column: "hasThumbnail", .boolean).notNull().defaults(to: false)
                t.add(column: "mediaState", .integer).notNull().defaults(to: 0)
            }
            try db.create(index: "photo_on_mediaState", on: "photo", columns: ["mediaState"])
        }
    }
}
