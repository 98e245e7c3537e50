import ArgumentParser
import Foundation
import LocafotoAgent
import LocafotoControl
import LocafotoCrypto
import LocafotoFormats
import LocafotoNode
import LocafotoQuery
import LocafotoVault

/// The sort orders the CLI offers, and the API's field each stands for.
enum SortKey: String, ExpressibleByArgument, CaseIterable {
    case capture, `import`, size, name

    var field: PhotoQuery.Sort {
        switch self {
        case .capture: .captureDate
        case .import: .importDate
        case .size: .size
        case .name: .name
        }
    }
}

/// Filters shared by `list`, `export` and the batch commands.
struct FilterOptions: ParsableArguments {
    @Option(help: "Sort by capture (date taken; import date when unknown), import, size or name.") var sort: SortKey?
    @Flag(help: "Oldest / smallest / A first (default: newest / largest / Z first).") var ascending = false
    @Option(help: "Only photos in this album.") var album: String?
    @Option(help: "Only photos with this tag.") var tag: String?
    @Flag(help: "Only favourites.") var favorites = false
    @Flag(help: "Include hidden photos.") var hidden = false
    @Flag(help: "Only hidden photos.") var onlyHidden = false
    @Option(help: "Taken (or imported) on or after this date (2025-11-15).") var since: String?
    @Option(help: "Taken (or imported) before this date.") var until: String?
    @Option(help: "Only this format (jpeg, png, heic, webp, …).") var format: String?
    @Option(name: .customLong("from"), help: "Only photos received from this peer fingerprint.") var sender: String?
    @Option(help: "Search names and tags.") var search: String?
    @Option(
        help: ArgumentHelp(
            "Only photos of at least this size: bytes, or with K, M, G (1024-based): 500K, 2M.", valueName: "size"))
    var minSize: String?
    @Flag(help: "Only photos whose EXIF has a GPS position.") var withLocation = false
    @Flag(help: "Only photos known to have no GPS position (photos not indexed yet are left out).")
    var withoutLocation = false
    @Option(help: "At most this many photos.") var limit: Int?

    var isEmpty: Bool {
        sort == nil && album == nil && tag == nil && !favorites && !hidden && !onlyHidden && since == nil
            && until == nil
            && format == nil && sender == nil && search == nil && limit == nil && minSize == nil && !withLocation
            && !withoutLocation
    }

    func validate() throws {
        if let minSize, Self.parseSize(minSize) == nil {
            throw ValidationError("--min-size takes bytes, or a number with K, M or G: 500K, 2M")
        }
        if withLocation && withoutLocation {
            throw ValidationError("--with-location and --without-location exclude each other")
        }
    }

    /// "2M" -> 2097152; nil for anything unreadable.
    static func parseSize(_ text: String) -> Int64? {
        let t = text.trimmingCharacters(in: .whitespaces).uppercased()
        let units: [Character: Int64] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
        let (digits, unit) = t.last.flatMap { units[$0] }.map { (String(t.dropLast()), $0) } ?? (t, 1)
        guard let n = Int64(digits), n >= 0, n <= Int64.max / unit else { return nil }
        return n * unit
    }

    var hasLocation: Bool? { withLocation ? true : withoutLocation ? false : nil }

    /// The control API's query (a date is checked here: the agent would refuse it anyway).
    func query() throws -> PhotoQuery {
        func date(_ text: String?, _ option: String) throws -> Date? {
            guard let text else { return nil }
            guard let d = PhotoQuery.date(text) else {
                throw CLIError("\(option) must be a date like 2025-11-15", code: .invalidRequest)
            }
            return d
        }
        return PhotoQuery(
            sort: sort?.field ?? .captureDate, order: ascending ? .ascending : .descending, album: album, tag: tag,
            favorite: favorites ? true : nil, hidden: onlyHidden ? .only : hidden ? .include : .exclude,
            from: try date(since, "--since"), before: try date(until, "--until"), format: format,
            senderFingerprint: sender, text: search, limit: limit, minSize: minSize.flatMap(Self.parseSize),
            hasLocation: hasLocation)
    }

    /// Photos named by id, or the filter; one of the two is required.
    func selection(ids: [String], all: Bool = false) throws -> PhotoSelection {
        if !ids.isEmpty { return .ids(ids) }
        if !isEmpty { return .query(try query()) }
        if all { return .query(PhotoQuery()) }
        throw CLIError(
            "name photos by id, or select them with a filter (--album, --tag, …); --all selects every photo",
            code: .invalidRequest)
    }
}

struct ShowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show", abstract: "Show one photo's details: metadata, EXIF facts, tags, albums.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Photo id (or a unique prefix).") var photo: String

    func run() throws {
        let answer = try global.fetch(PhotoDetail.self, "/v1/photos/\(photo)")
        if global.json { return global.printJSON(answer) }
        let p = answer.value.photo
        let m = answer.value.media
        func s(_ v: (some Any)?) -> String { v.map { "\($0)" } ?? "-" }
        func date(_ d: Date?) -> String { d.map { $0.formatted(.iso8601) } ?? "-" }
        print(
            """
            id:        \(p.id)
            name:      \(s(p.name))
            format:    \(p.format)  \(Format.bytes(p.originalSize))
            size:      \(s(m.width)) × \(s(m.height))  orientation \(s(m.orientation))
            taken:     \(date(p.captureDate))
            imported:  \(date(p.importDate))
            camera:    \(s(m.cameraMake)) \(s(m.cameraModel))
            location:  \(m.hasLocation == true ? "yes (GPS in EXIF; --strip-location removes it)" : "no")
            from:      \(s(p.senderName)) \(s(p.senderFingerprint))
            tags:      \(p.tags.joined(separator: ", "))
            favourite: \(p.isFavorite)  hidden: \(p.isHidden)
            albums:    \(answer.value.albums.joined(separator: ", "))
            """)
        // A filtered or compressed copy says what it was made from.
        if let d = p.derivedFrom { print("made from: \(d)") }
    }
}

struct ThumbCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "thumb",
        abstract: "Write a photo's thumbnail (JPEG, up to 320 px) to a file, or to standard output (-).",
        discussion: """
            The agent makes a thumbnail when it is first asked for and stores it encrypted like the photos. \
            `locafoto thumb ID -` writes the JPEG to standard output, decrypted in the agent's memory: no file.
            """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Photo id (or a unique prefix).") var photo: String
    @Argument(help: "Output file (must not exist), or - for standard output.") var file: String

    func run() throws {
        if file == "-" {
            if isatty(STDOUT_FILENO) == 1 {
                throw CLIError("standard output is a terminal: redirect it, or name a file", code: .invalidRequest)
            }
            return try RawOutput.write(
                try RawOutput.get(global, "/v1/photos/\(RawOutput.query(photo))/thumbnail"), to: "-")
        }
        let r = try global.fetch(
            PhotoFile.self, "/v1/photos/\(photo)/thumbnail", body: PathRequest(path: NodeHome.absolute(file)))
        global.say(r) { $0.path ?? file }
    }
}

/// `tag`, `untag`, `favorite`, `unfavorite`, `hide`, `unhide`, `delete`: one batch action on a selection.
struct BatchCommand {
    static func run(
        _ global: GlobalOptions, _ filter: FilterOptions, ids: [String], action: BatchAction, tags: [String] = [],
        all: Bool = false
    ) throws {
        let r = try global.fetch(
            BatchOutcome.self, "/v1/photos/batch",
            body: BatchRequest(selection: try filter.selection(ids: ids, all: all), action: action, tags: tags))
        global.say(r) { "\(action.rawValue): \($0.count) photo(s)" }
    }
}

struct TagCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tag", abstract: "Add (or with --remove, remove) tags on photos named by id or by a filter.",
        discussion: "Example: locafoto tag --add beach --add 2025 --album Holidays")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var filter: FilterOptions
    @Option(name: .customLong("add"), help: "Tag to add (repeatable).") var add: [String] = []
    @Option(name: .customLong("remove"), help: "Tag to remove (repeatable).") var remove: [String] = []
    @Argument(help: "Photo ids (or unique prefixes).") var photos: [String] = []

    func validate() throws {
        guard !add.isEmpty || !remove.isEmpty else { throw ValidationError("give --add TAG or --remove TAG") }
    }

    func run() throws {
        if !add.isEmpty { try BatchCommand.run(global, filter, ids: photos, action: .tag, tags: add) }
        if !remove.isEmpty { try BatchCommand.run(global, filter, ids: photos, action: .untag, tags: remove) }
    }
}

typealias FavoriteCommand = VerbCommand<Favorite>
enum Favorite: Verb {
    static let configuration = CommandConfiguration(
        commandName: "favorite", abstract: "Mark photos as favourites (--off to unmark).")
    static func run(_ t: MarkedPhotos, _ global: GlobalOptions) throws { try t.mark(.favorite, .unfavorite, global) }
}

typealias HideCommand = VerbCommand<Hide>
enum Hide: Verb {
    static let configuration = CommandConfiguration(
        commandName: "hide", abstract: "Hide photos from listings (--off to show them again).")
    static func run(_ t: MarkedPhotos, _ global: GlobalOptions) throws { try t.mark(.hide, .unhide, global) }
}

struct DeleteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete", abstract: "Delete photos for real: encrypted file removed, key destroyed.",
        discussion:
            "Named by id or by a filter (--all for every photo). Asks for confirmation on a terminal unless --yes.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var filter: FilterOptions
    @Flag(help: "Select every photo (with no ids or filter).") var all = false
    @Flag(name: [.short, .long], help: "Do not ask.") var yes = false
    @Argument(help: "Photo ids (or unique prefixes).") var photos: [String] = []

    func run() throws {
        if !yes {
            guard isatty(STDIN_FILENO) == 1 else {
                throw CLIError("deleting needs --yes when not on a terminal", code: .invalidRequest)
            }
            writeStderr("Delete the selected photos for good? [y/N] ")
            guard readLine()?.lowercased().hasPrefix("y") == true else { throw CLIError("nothing deleted") }
        }
        try BatchCommand.run(global, filter, ids: photos, action: .delete, all: all)
    }
}

struct AlbumCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "album",
        abstract: "Albums: create, rename, delete, add/remove/move/copy photos, cover, private albums.",
        subcommands: [
            List.self, Create.self, Rename.self, Delete.self, VerbCommand<Add>.self, VerbCommand<Remove>.self,
            Move.self,
            Copy.self, Cover.self,
            Unlock.self, Lock.self, Passwd.self,
        ])

    /// `body` to `/v1/albums/{action}`; `action` is one `R` serves (the only one, by default).
    static func call<R: AlbumActionRequest>(
        _ global: GlobalOptions, _ body: R, as action: AlbumAction = R.actions[0]
    ) throws {
        if action.answersWithChange {
            let r = try global.fetch(AlbumChange.self, "/v1/albums/\(action.rawValue)", body: body)
            return global.say(r) { c in
                c.count.map { "\(action.rawValue): \($0) photo(s) in '\(c.album)'" } ?? "\(action.rawValue): \(c.album)"
            }
        }
        let r = try global.fetch(AlbumInfo.self, "/v1/albums/\(action.rawValue)", body: body)
        global.say(r) { "\(action.rawValue): \($0.name)" }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List albums.")
        @OptionGroup var global: GlobalOptions
        func run() throws {
            try global.printList(
                AlbumInfo.self, "/v1/albums", empty: "No albums. Create one with `locafoto album create NAME`.",
                ["NAME", "PHOTOS", "COVER", "KIND"]
            ) {
                [
                    $0.name, $0.photoCount.map(String.init) ?? "?", String(($0.coverPhotoID ?? "-").prefix(8)),
                    $0.isPrivate ? ($0.isLocked ? "private, locked" : "private") : "",
                ]
            }
        }
    }

    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Create an album; --private protects it with its own passphrase (asked on the terminal or read from --passphrase-file)."
        )
        @OptionGroup var global: GlobalOptions
        @Argument var name: String
        @Flag(help: "A private album: its photos are invisible until `album unlock`.") var `private` = false
        @Option(help: ArgumentHelp("Read the album passphrase from this file.", valueName: "file")) var passphraseFile:
            String?
        func run() throws {
            var body = AlbumCreateRequest(name: name)
            if `private` {
                let pass = try Passphrase.obtain(
                    file: passphraseFile, prompt: "Album passphrase: ", confirm: passphraseFile == nil,
                    environment: false)
                body.passphrase = pass.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
            }
            try AlbumCommand.call(global, body)
        }
    }

    struct Rename: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Rename an album.")
        @OptionGroup var global: GlobalOptions
        @Argument var album: String
        @Argument var newName: String
        func run() throws {
            try AlbumCommand.call(global, AlbumRenameRequest(album: album, name: newName))
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete an album (its photos stay unless --with-photos).")
        @OptionGroup var global: GlobalOptions
        @Argument var album: String
        @Flag(help: "Also delete its photos for real.") var withPhotos = false
        func run() throws {
            try AlbumCommand.call(global, AlbumDeleteRequest(album: album, deletePhotos: withPhotos))
        }
    }

    /// An album and photos of the vault, by id or by a filter.
    struct AlbumPhotos: ParsableArguments {
        @OptionGroup var filter: FilterOptions
        @Argument var album: String
        @Argument var photos: [String] = []

        func change(_ action: AlbumAction, _ global: GlobalOptions) throws {
            try AlbumCommand.call(
                global, AlbumPhotosRequest(album: album, selection: try filter.selection(ids: photos)), as: action)
        }
    }

    enum Add: Verb {
        static let configuration = CommandConfiguration(
            commandName: "add", abstract: "Add photos (by id or filter) to an album.")
        static func run(_ t: AlbumPhotos, _ global: GlobalOptions) throws { try t.change(.add, global) }
    }

    enum Remove: Verb {
        static let configuration = CommandConfiguration(
            commandName: "remove", abstract: "Take photos out of an album (they stay in the vault).")
        static func run(_ t: AlbumPhotos, _ global: GlobalOptions) throws { try t.change(.remove, global) }
    }

    struct Move: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Move photos from one album to another.")
        @OptionGroup var transfer: AlbumTransfer
        func run() throws { try transfer.run(.move) }
    }

    struct Copy: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Also put photos of one album into another (a photo can be in several albums).")
        @OptionGroup var transfer: AlbumTransfer
        func run() throws { try transfer.run(.copy) }
    }

    /// What `album move` and `album copy` take.
    struct AlbumTransfer: ParsableArguments {
        @OptionGroup var global: GlobalOptions
        @OptionGroup var filter: FilterOptions
        @Argument var fromAlbum: String
        @Argument var toAlbum: String
        @Argument var photos: [String] = []

        func run(_ action: AlbumAction) throws {
            try AlbumCommand.call(
                global, AlbumMoveRequest(album: fromAlbum, to: toAlbum, selection: try filter.selection(ids: photos)),
                as: action)
        }
    }

    struct Cover: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set an album's cover photo (a member), or clear it with --clear.")
        @OptionGroup var global: GlobalOptions
        @Argument var album: String
        @Argument var photo: String?
        @Flag var clear = false
        func run() throws {
            guard clear || photo != nil else {
                throw CLIError("name the cover photo, or --clear", code: .invalidRequest)
            }
            try AlbumCommand.call(global, AlbumCoverRequest(album: album, photo: clear ? nil : photo))
        }
    }

    struct Unlock: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Unlock a private album until the vault is locked.")
        @OptionGroup var global: GlobalOptions
        @Argument var album: String
        @Option(help: ArgumentHelp("Read the album passphrase from this file.", valueName: "file")) var passphraseFile:
            String?
        func run() throws {
            let pass = try Passphrase.obtain(file: passphraseFile, prompt: "Album passphrase: ", environment: false)
            try AlbumCommand.call(
                global,
                AlbumLockRequest(
                    album: album, passphrase: pass.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }),
                as: .unlock)
        }
    }

    struct Passwd: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change a private album's passphrase (the vault must be unlocked).",
            discussion:
                "The current passphrase is read from the terminal or --passphrase-file, the new one from the terminal (twice) or --new-passphrase-file. Only the album key is re-wrapped; no photo is re-encrypted. Wrong current passphrases count towards the album's unlock throttle."
        )
        @OptionGroup var global: GlobalOptions
        @Argument var album: String
        @Option(help: ArgumentHelp("Read the current album passphrase from this file.", valueName: "file"))
        var passphraseFile: String?
        @Option(help: ArgumentHelp("Read the new album passphrase from this file.", valueName: "file"))
        var newPassphraseFile: String?
        func run() throws {
            let old = try Passphrase.obtain(
                file: passphraseFile, prompt: "Current album passphrase: ", environment: false)
            let new = try Passphrase.obtain(
                file: newPassphraseFile, prompt: "New album passphrase: ", confirm: newPassphraseFile == nil,
                environment: false)
            try AlbumCommand.call(
                global,
                AlbumPasswdRequest(
                    album: album, passphrase: old.withUnsafeBytes { String(decoding: $0, as: UTF8.self) },
                    newPassphrase: new.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }))
        }
    }

    struct Lock: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Lock a private album again.")
        @OptionGroup var global: GlobalOptions
        @Argument var album: String
        func run() throws { try AlbumCommand.call(global, AlbumLockRequest(album: album), as: .lock) }
    }
}
