import Foundation
import Hummingbird
import LocafotoClock
import LocafotoControl
import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats
import LocafotoMedia
import LocafotoNode
import LocafotoQuery
import LocafotoVault

package enum LocafotoMediaLimits {
    /// The largest photo answered whole from memory (as large as `send` takes from the vault).
    package static let maxInMemory = 256 << 20
}

/// Filters and compression in the vault (docs/usage.md "Filters", "Compression in the vault"): every
/// photo is decrypted in memory, processed by libvips in memory, and either answered or
/// imported encrypted. No plaintext file is ever made. `/v1/filters`, `/v1/photos/{id}/filtered`,
/// `/v1/photos/filter`, `/v1/compress`.
package struct FiltersController: Sendable {
    let vaults: VaultUse
    let events: EventHub
    let clock: any AgentClock

    /// Decoding and encoding photos takes seconds for a batch: on NIO's thread pool, not the
    /// cooperative pool that sessions and the control socket share (2 threads on 2 cores).
    package func addRoutes(to t: inout RouteTable) {
        t.get("/v1/filters") { _ in filtersRoute() }
        t.get("/v1/photos/:id/filtered") { r in
            let (id, query) = (try r.parameter("id"), r.query)
            return try await BlockingWork.run { try filteredRoute(id, query) }
        }
        t.post("/v1/photos/filter") { r in
            let body = r.body
            return try await BlockingWork.run { try filterPhotosRoute(body) }
        }
        t.post("/v1/compress") { r in
            let body = r.body
            return try await BlockingWork.run { try compressRoute(body) }
        }
    }

    /// The largest photo processed in memory (as large as `send` takes from the vault).
    package static let maxProcessedBytes = LocafotoMediaLimits.maxInMemory

    package func filtersRoute() -> ControlResponse {
        .json(PhotoFilter.allCases.map { FilterInfo(name: $0.rawValue, description: $0.summary) })
    }

    /// A photo of the vault with `filter` applied, in memory.
    package static func filtered(_ vault: Vault, _ record: PhotoRecord, _ filter: PhotoFilter, _ options: RenderOptions)
        throws
        -> [UInt8]
    {
        var plain = try vault.exportData(record.id, maxSize: Int64(Self.maxProcessedBytes))
        defer { secureZero(&plain) }
        return try plain.withUnsafeBytes {
            try Media.render($0, type: record.contentType, filter: filter, options: options)
        }
    }

    /// `GET /v1/photos/{id}/filtered?filter=NAME[&stripLocation=1]`: a preview of the filter
    /// (the whole photo, JPEG), decrypted and filtered in memory; the vault is not changed.
    package func filteredRoute(_ id: String, _ query: [String: String]) throws -> ControlResponse {
        guard let name = query["filter"], !name.isEmpty else {
            throw AgentError(.invalidRequest, "give ?filter=NAME, one of \(PhotoFilter.names)")
        }
        let filter = try PhotoFilter.named(name)
        let options = RenderOptions(stripLocation: ["1", "true"].contains(query["stripLocation"] ?? ""))
        let vault = try vaults.unlocked()
        let record = try vault.photo(matching: id)
        return .bytes(try Self.filtered(vault, record, filter, options), contentType: "image/jpeg")
    }

    /// `POST /v1/photos/filter`: a filtered copy of each selected photo, linked to it
    /// (`derivedFrom`), in the same albums, with its tags and capture date. Per photo: one that
    /// cannot be filtered gets an error and the others go on.
    package func filterPhotosRoute(_ body: [UInt8]) throws -> ControlResponse {
        let b = try ControlJSON.decode(FilterRequest.self, body)
        let filter = try PhotoFilter.named(b.filter)
        var options = RenderOptions(stripLocation: b.stripLocation ?? false)
        if let q = b.quality {
            guard (60...100).contains(q) else {
                throw AgentError(.invalidRequest, "quality must be 60...100 (default \(RenderOptions.filterQuality))")
            }
            options.quality = q
        }
        let vault = try vaults.unlocked()
        let records = try selectedPhotos(b.selection, vault)
        let results = records.map { record in
            do {
                let bytes = try Self.filtered(vault, record, filter, options)
                let name = Self.derivedName(record.name, tag: filter.rawValue, extension: "jpg")
                let copy = try vault.addDerived(bytes, from: record.id, name: name, placement: .beside)
                return FilteredPhoto(original: record.id, photo: copy.id)
            } catch {
                return FilteredPhoto(original: record.id, error: ControlErrorMiddleware.agentError(error).message)
            }
        }
        let made = results.filter { $0.photo != nil }
        if !made.isEmpty {
            events.publish(
                .photosChanged(change: "filter", count: made.count, photo: made.count == 1 ? made[0].photo : nil))
        }
        return .json(results, status: made.isEmpty ? 200 : 201)
    }

    /// `POST /v1/compress`: seed 004 in the vault. Each photo is re-encoded (longest side 1500,
    /// quality 75 by default) into a copy in an album, or in place of the original; a photo whose
    /// compressed form is not smaller is left alone. A dry run changes nothing and estimates.
    package func compressRoute(_ body: [UInt8]) throws -> ControlResponse {
        let b = try ControlJSON.decode(CompressRequest.self, body)
        var c = CompressionOptions()
        if let q = b.quality { c.quality = q }
        if let s = b.maxSide { c.maxSide = s }
        try c.validate()
        guard let format = OutputFormat(rawValue: (b.format ?? "jpeg").lowercased()) else {
            throw AgentError(.invalidRequest, "format must be jpeg or heic")
        }
        if format == .heic && !Media.canWriteHEIC {
            throw AgentError(.unsupported, "this libvips cannot write HEIC (no heifsave); use --format jpeg")
        }
        let selection = b.selection
        let vault = try vaults.unlocked()
        let records = try selectedPhotos(selection, vault)
        let replace = b.replace ?? false
        if b.dryRun ?? false {
            let estimates = records.map { Self.estimate($0, c, format) }
                .sorted { ($0.savedBytes ?? Int64.min, $1.original) > ($1.savedBytes ?? Int64.min, $0.original) }
            return .json(
                CompressOutcome(
                    dryRun: true, album: nil, replaced: false, format: format.rawValue, quality: c.quality,
                    maxSide: c.maxSide, photos: estimates))
        }
        let album = replace ? nil : (b.album ?? Self.compressedAlbumName(selection, on: clock.date))
        let options = RenderOptions(
            maxSide: c.maxSide, quality: c.quality, stripLocation: b.stripLocation ?? false, format: format)
        var replaced: [String] = []
        let results = records.map { record -> CompressedPhoto in
            do {
                var plain = try vault.exportData(record.id, maxSize: Int64(Self.maxProcessedBytes))
                defer { secureZero(&plain) }
                // JPEG: the same code as `send --compress` (Media.compress); HEIC: the same pipeline
                // with libheif's encoder at the end.
                var o = c
                o.stripLocation = options.stripLocation
                let out = try plain.withUnsafeBytes {
                    format == .jpeg
                        ? try Media.compress($0, type: record.contentType ?? .jpeg, options: o)
                        : try Media.render($0, type: record.contentType, filter: nil, options: options)
                }
                guard Int64(out.count) < record.originalSize else {
                    return CompressedPhoto(
                        original: record.id, name: record.name, beforeBytes: record.originalSize,
                        afterBytes: Int64(out.count),
                        skipped:
                            "already small: compressed it would be \(out.count) bytes, not less than \(record.originalSize)"
                    )
                }
                let name = Self.derivedName(record.name, tag: nil, extension: format.fileExtension)
                let copy = try vault.addDerived(
                    out, from: record.id, name: name, placement: album.map(DerivedPlacement.inAlbum) ?? .replacing)
                if replace { replaced.append(record.id) }
                return CompressedPhoto(
                    original: record.id, name: record.name, photo: copy.id, beforeBytes: record.originalSize,
                    afterBytes: Int64(out.count))
            } catch {
                return CompressedPhoto(
                    original: record.id, name: record.name, beforeBytes: record.originalSize,
                    skipped: ControlErrorMiddleware.agentError(error).message)
            }
        }
        let made = results.filter { $0.photo != nil }.count
        if made > 0 {
            events.publish(.photosChanged(change: "compress", count: made, photo: nil))
        }
        if !replaced.isEmpty {
            events.photosDeleted(replaced)
        }
        if let album, made > 0 {
            events.publish(.albumChanged(action: "add", album: album, count: made))
        }
        return .json(
            CompressOutcome(
                dryRun: false, album: album, replaced: replace, format: format.rawValue, quality: c.quality,
                maxSide: c.maxSide, photos: results))
    }

    package func selectedPhotos(_ selection: PhotoSelection, _ vault: Vault) throws -> [PhotoRecord] {
        let records: [PhotoRecord]
        switch selection {
        case .ids(let ids): records = try ids.map { try vault.photo(matching: $0) }
        case .query(let q): records = try vault.photos(matching: q)
        }
        guard !records.isEmpty else { throw AgentError(.notFound, "no photo in the vault matches") }
        return records
    }

    /// "Compressed – Trip" for photos chosen by album, else "Compressed – 2026-11-25".
    package static func compressedAlbumName(_ selection: PhotoSelection, on date: Date) -> String {
        if case .query(let q) = selection, let album = q.album { return "Compressed – \(album)" }
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.dateFormat = "yyyy-MM-dd"
        return "Compressed – \(f.string(from: date))"
    }

    /// `IMG_1.HEIC` → `IMG_1-sepia.jpg` (or `IMG_1.jpg` without a tag); nil stays nil.
    package static func derivedName(_ name: String?, tag: String?, extension ext: String) -> String? {
        guard let name else { return nil }
        let base = (name as NSString).deletingPathExtension
        return (base.isEmpty ? name : base) + (tag.map { "-" + $0 } ?? "") + "." + ext
    }

    /// Bytes per output pixel of a typical camera photo at 1500 px, JPEG at quality 60, 75 and 90
    /// (interpolated between; HEIC about half). An estimate: content moves it either way, noise
    /// and fine detail up, sky and walls down.
    package static func bytesPerPixel(quality: Int, format: OutputFormat) -> Double {
        let points: [(Double, Double)] = [(60, 0.16), (75, 0.22), (90, 0.40)]
        let q = Double(quality)
        var bpp = points.last!.1
        for (a, b) in zip(points, points.dropFirst()) where q <= b.0 {
            bpp = a.1 + (b.1 - a.1) * (max(q, a.0) - a.0) / (b.0 - a.0)
            break
        }
        return format == .heic ? bpp / 2 : bpp
    }

    /// A dry run's line: the size estimated from the photo's dimensions (known once the indexer
    /// read it) and its own bytes per pixel, never from its pixels, so a dry run over thousands of
    /// photos decodes none. Per output pixel: the typical rate at this quality, or — when less —
    /// the photo's own rate scaled from quality 90 to this one (an already small, smooth or
    /// efficiently coded photo stays small), at the output's size.
    package static func estimate(_ r: PhotoRecord, _ c: CompressionOptions, _ format: OutputFormat) -> CompressedPhoto {
        guard let w = r.width, let h = r.height, w > 0, h > 0 else {
            return CompressedPhoto(
                original: r.id, name: r.name, beforeBytes: r.originalSize,
                skipped: "dimensions not known yet (the indexer has not read it)")
        }
        let scale = min(1, Double(c.maxSide) / Double(max(w, h)))
        let pixels = (Double(w) * scale).rounded() * (Double(h) * scale).rounded()
        let typical = bytesPerPixel(quality: c.quality, format: format)
        let own =
            Double(r.originalSize) / (Double(w) * Double(h)) * typical / bytesPerPixel(quality: 90, format: format)
        let after = Int64(pixels * min(typical, own))
        guard after < r.originalSize else {
            return CompressedPhoto(
                original: r.id, name: r.name, beforeBytes: r.originalSize, afterBytes: after,
                skipped: "would not be smaller")
        }
        return CompressedPhoto(original: r.id, name: r.name, beforeBytes: r.originalSize, afterBytes: after)
    }
}
