import ArgumentParser
import Foundation
import LocafotoControl
import LocafotoMedia

extension PhotoFilter: EnumerableFlag {
    public static func help(for value: PhotoFilter) -> ArgumentHelp? { ArgumentHelp(value.summary) }
}

/// Fetches raw bytes (a photo, a thumbnail, a filtered preview) and writes them to standard
/// output or to a new file (0600, never replacing one). The agent answers them from memory.
enum RawOutput {
    static func get(_ global: GlobalOptions, _ path: String) throws -> Data {
        let r = try global.client.get(path)
        guard r.status == 200 else {
            try global.check(r)  // the agent's error, with its exit status
            throw CLIError("the agent answered \(r.status)")
        }
        return r.body
    }

    static func write(_ bytes: Data, to output: String) throws {
        if output == "-" {
            FileHandle.standardOutput.write(bytes)
            return
        }
        let fd = open(output, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw CLIError("cannot create \(output): \(String(cString: strerror(errno)))", code: .io)
        }
        let file = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        do { try file.write(contentsOf: bytes) } catch {
            throw CLIError("cannot write \(output): \(error)", code: .io)
        }
    }

    static func query(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
    }
}

struct FilterCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "filter",
        abstract: "Add a filtered copy of photos to the vault (the originals stay), or preview a filter.",
        discussion: """
            `locafoto filter ID… --sepia` (or `--filter sepia`) adds, for each photo, a filtered \
            JPEG linked to it (`derivedFrom`), in the same albums, with its tags, capture date and \
            metadata (GPS too, unless --strip-location). Photos are named by id or by any filter of \
            `list` (--album, --tag, …). `--preview -o FILE` (or `-o -` for standard output) writes \
            the filtered photo without changing the vault. `--list` shows the filters; \
            docs/usage.md "Filters" defines each one exactly (colour matrix and tone curves).
            """)
    @OptionGroup var global: GlobalOptions
    @OptionGroup var selection: FilterOptions
    @Flag(exclusivity: .exclusive) var chosen: PhotoFilter?
    @Option(
        name: .customLong("filter"), help: ArgumentHelp("The filter by name (the same as its flag).", valueName: "name")
    ) var filterName: String?
    @Flag(help: "Remove the GPS position from the copies.") var stripLocation = false
    @Option(help: "JPEG quality of the copies, 60…100 (default 92).") var quality: Int?
    @Flag(help: "Write the filtered photo (one) to -o instead of adding it to the vault.") var preview = false
    @Option(
        name: .shortAndLong,
        help: ArgumentHelp(
            "With --preview: the file to write (must not exist), or - for standard output.", valueName: "file"))
    var output: String?
    @Flag(help: "List the filters.") var list = false
    @Argument(help: "Photo ids (or unique prefixes).") var photos: [String] = []

    func validate() throws {
        if list { return }
        guard (chosen == nil) != (filterName == nil) else {
            throw ValidationError(
                "choose one filter: --\(PhotoFilter.allCases.map(\.rawValue).joined(separator: ", --")) or --filter NAME"
            )
        }
        if preview {
            guard photos.count == 1 else { throw ValidationError("--preview shows one photo: name it by id") }
            guard let output else { throw ValidationError("give -o FILE, or -o - for standard output") }
            if output == "-" && isatty(STDOUT_FILENO) == 1 {
                throw ValidationError("standard output is a terminal: redirect it, or give -o FILE")
            }
        } else if output != nil {
            throw ValidationError("-o goes with --preview")
        }
    }

    func run() throws {
        if list {
            let r = try global.fetch([FilterInfo].self, "/v1/filters")
            if global.json { return global.printJSON(r) }
            return print(Format.table(["FILTER", "WHAT IT DOES"], r.value.map { [$0.name, $0.description] }))
        }
        let name = chosen?.rawValue ?? filterName ?? ""
        if preview, let output {
            let q = "filter=\(RawOutput.query(name))" + (stripLocation ? "&stripLocation=1" : "")
            let bytes = try RawOutput.get(global, "/v1/photos/\(RawOutput.query(photos[0]))/filtered?\(q)")
            try RawOutput.write(bytes, to: output)
            if output != "-" && !global.json {
                print("wrote \(name) preview (\(Format.bytes(Int64(bytes.count)))) to \(output)")
            }
            return
        }
        let r = try global.fetch(
            [FilteredPhoto].self, "/v1/photos/filter",
            body: FilterRequest(
                selection: try selection.selection(ids: photos), filter: name,
                stripLocation: stripLocation ? true : nil, quality: quality))
        let failures = r.value.filter { $0.error != nil }
        if global.json, let first = failures.first {
            // The one error shape, every photo's outcome beside it.
            printJSONError(
                code: ExitStatus.code(for: ExitStatus.failed),
                message: "\(failures.count) of \(r.value.count) photo(s) not filtered: \(first.error ?? "")",
                detail: ("photos", r.value))
        } else if global.json {
            global.printJSON(r)
        }
        var failed = 0
        for o in r.value {
            if let e = o.error {
                failed += 1
                writeStderr("not filtered \(String(o.original.prefix(8))): \(e)\n")
            } else if !global.json, let p = o.photo {
                print("\(name): \(String(o.original.prefix(8))) → \(String(p.prefix(8)))")
            }
        }
        if failed > 0 { throw ExitCode(ExitStatus.failed) }
    }
}

struct CompressCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compress",
        abstract: "Compress photos in the vault: 1500 px, quality 75, into an album or in place.",
        discussion: """
            Photos named by id or by any filter of `list` (--album, --tag, --favorites, --since, \
            --until, --format, …) are re-encoded: longest side 1500 px (--max-side; never \
            enlarged), quality 75 (--quality 60…90), JPEG or HEIC (--output-format heic, where \
            libvips has an HEIF encoder), metadata and dates kept, GPS removed with \
            --strip-location. The copies go into the album "Compressed – NAME" (NAME: the --album \
            filter, else today's date; --into ALBUM chooses) linked to their originals; \
            --replace puts each copy in place of its original instead (albums, tags, favourite, \
            dates) and deletes the original — asked first on a terminal, --yes for scripts. A photo \
            whose compressed form would not be smaller is left alone. Statistics per photo and in \
            total: before, after, saved, ratio. --dry-run changes nothing and lists the photos \
            that would gain most, from an estimate (their dimensions and the quality; no photo \
            is decoded).
            """)
    @OptionGroup var global: GlobalOptions
    @OptionGroup var selection: FilterOptions
    @Option(help: "JPEG/HEIC quality, 60…90.") var quality = 75
    @Option(help: "Longest side in pixels.") var maxSide = 1500
    @Option(
        help: ArgumentHelp("Output format: jpeg or heic (--format filters the photos by theirs).", valueName: "format"))
    var outputFormat = "jpeg"
    @Flag(help: "Remove the GPS position from the compressed photos.") var stripLocation = false
    @Option(
        name: .customLong("into"),
        help: ArgumentHelp("The album for the copies (created when missing).", valueName: "album")) var album: String?
    @Flag(help: "Replace the originals (asks first unless --yes).") var replace = false
    @Flag(name: [.short, .long], help: "Do not ask.") var yes = false
    @Flag(help: "Change nothing: estimate what each photo would gain, largest first.") var dryRun = false
    @Flag(help: "Select every photo (with no ids or filter).") var all = false
    @Argument(help: "Photo ids (or unique prefixes).") var photos: [String] = []

    func validate() throws {
        if replace && album != nil { throw ValidationError("--replace and --into exclude each other") }
    }

    func run() throws {
        let sel = try selection.selection(ids: photos, all: all)
        if replace && !dryRun && !yes {
            guard isatty(STDIN_FILENO) == 1 else {
                throw CLIError("replacing originals needs --yes when not on a terminal", code: .invalidRequest)
            }
            writeStderr("Replace the selected originals by compressed copies (the originals are deleted)? [y/N] ")
            guard readLine()?.lowercased().hasPrefix("y") == true else { throw CLIError("nothing compressed") }
        }
        let r = try global.fetch(
            CompressOutcome.self, "/v1/compress",
            body: CompressRequest(
                selection: sel, quality: quality, maxSide: maxSide, format: outputFormat,
                stripLocation: stripLocation ? true : nil,
                album: album, replace: replace ? true : nil, dryRun: dryRun ? true : nil))
        if global.json { return global.printJSON(r) }
        let o = r.value
        func ratio(_ x: Double?) -> String { x.map { String(format: "%.0f %%", $0 * 100) } ?? "-" }
        func size(_ x: Int64?) -> String { x.map(Format.bytes) ?? "-" }
        print(
            Format.table(
                [
                    "PHOTO", "NAME", "BEFORE", o.dryRun ? "ESTIMATE" : "AFTER", "SAVED", "RATIO",
                    o.dryRun ? "" : "NEW",
                ],
                o.photos.map {
                    [
                        String($0.original.prefix(8)), $0.name ?? "", size($0.beforeBytes), size($0.afterBytes),
                        $0.skipped == nil ? size($0.savedBytes) : "-", $0.skipped == nil ? ratio($0.ratio) : "-",
                        $0.skipped.map { "skipped: \($0)" } ?? String(($0.photo ?? "").prefix(8)),
                    ]
                }))
        let done = o.photos.filter { $0.skipped == nil }.count
        let verb = o.dryRun ? "would save about" : "saved"
        print(
            "\(done) photo(s): \(size(o.beforeBytes)) → \(size(o.afterBytes)), \(verb) \(size(o.savedBytes)) (\(ratio(o.ratio)))"
                + (o.album.map { " — in album \"\($0)\"" } ?? "") + (o.replaced ? " — originals replaced" : ""))
    }
}
