import Foundation
import Hummingbird
import LocafotoControl
import LocafotoCrypto
import LocafotoErrors
import LocafotoFormats
import LocafotoMedia
import LocafotoNode
import LocafotoPeers
import LocafotoSending
import LocafotoTransfers
import LocafotoVault

/// `/v1/bundle` and `/v1/open`: a `.locaphoto` bundle sealed for a known peer from a photo file
/// or a vault photo (carried by hand: mail, a USB stick), and a bundle sealed for this node
/// opened into the vault. Files by path: for the control socket only.
package struct BundlesController: Sendable {
    let vaults: VaultUse
    let identity: Identity
    let store: AgentStore
    let directory: PeerDirectory
    /// Opening a bundle is a local import: the classify hook decides, as for files.
    let hook: ClassifyHook?

    package func addRoutes(to t: inout RouteTable) {
        t.post("/v1/bundle") { r in .json(try writeBundle(try ControlJSON.decode(BundleWriteRequest.self, r.body))) }
        t.post("/v1/open") { r in
            .json(try openBundle(at: NodeHome.absolute(try ControlJSON.decode(PathRequest.self, r.body).path)))
        }
    }

    package func writeBundle(_ b: BundleWriteRequest) throws -> BundleWritten {
        guard (b.file == nil) != (b.photo == nil) else {
            throw AgentError(.invalidRequest, "give either file (a photo file) or photo (a vault photo's id)")
        }
        let choice = try PeerResolver.resolve(b.peer, online: directory.online, known: try store.peers())
        guard let known = try store.peer(choice.fingerprint.description) else {
            throw AgentError(
                .notFound, "\(choice.name)'s key is not known yet: exchange photos once over the network first")
        }
        let recipient = try SigningPublicKey(bytes: [UInt8](known.publicKey))
        let maxSize = Int64(LocaphotoFile.maxFileSize / 2)
        var data: [UInt8]
        let kind: String
        let name: String?
        if let photo = b.photo {
            // Decrypted in memory only, and sealed again for the recipient.
            let v = try vaults.unlocked()
            let record = try v.photo(matching: photo)
            guard record.originalSize <= maxSize else {
                throw AgentError(
                    .invalidRequest,
                    "photo \(record.id.prefix(8)) is larger than the \(maxSize >> 20) MiB a bundle can carry; send it instead"
                )
            }
            data = try v.exportData(record.id, maxSize: maxSize)
            (kind, name) = (record.format, Vault.exportFileName(for: record))
        } else {
            let path = NodeHome.absolute(b.file!)
            let item = try PreparedItem.prepare(path: path, maxSize: maxSize)
            guard let d = FileManager.default.contents(atPath: path).map({ [UInt8]($0) }), Int64(d.count) == item.size
            else {
                throw AgentError(.conflict, "\(path) changed while it was being read")
            }
            data = d
            (kind, name) = (item.kind, item.name)
        }
        defer { secureZero(&data) }
        let out = NodeHome.absolute(b.output)
        guard !FileManager.default.fileExists(atPath: out) else { throw AgentError(.conflict, "\(out) already exists") }
        let metadata = Self.bundleMetadata(of: data, kind: kind, name: name)
        let sealer = try BundleSealer(
            photoID: UUID().uuidString.lowercased(), sender: identity.signingKey, recipient: recipient)
        data.withUnsafeMutableBytes { sealer.encrypt($0) }
        let header = try sealer.finish(metadata: metadata)
        guard
            FileManager.default.createFile(atPath: out, contents: try LocaphotoFile.encode(header, encryptedData: data))
        else {
            throw AgentError(.io, "cannot write \(out)")
        }
        return BundleWritten(
            path: out, recipient: PeerRef(name: known.name, fingerprint: known.fingerprint), bytes: Int64(data.count))
    }

    /// A bundle's metadata: size, format and name, with the capture date and the displayed size
    /// read from the photo's header and EXIF (libvips, no pixels decoded). A photo libvips cannot
    /// read, or one without EXIF, leaves them out (they are optional in formats.md).
    static func bundleMetadata(of bytes: [UInt8], kind: String, name: String?) -> BundleMetadata {
        var m = BundleMetadata(originalSize: Int64(bytes.count), format: kind.uppercased(), name: name)
        guard let type = ContentType(rawValue: kind),
            let facts = try? bytes.withUnsafeBytes({ try Media.metadata(of: $0, type: type) })
        else { return m }
        let limit = 1...1_000_000  // formats.md: width/height 1…1,000,000
        if let w = facts.width, let h = facts.height, limit.contains(w), limit.contains(h) {
            m.width = w
            m.height = h
        }
        if let d = facts.captureDate {
            let f = ISO8601DateFormatter()
            f.formatOptions = [.withInternetDateTime]
            f.timeZone = TimeZone(identifier: "UTC")
            m.captureDate = f.string(from: d)
        }
        return m
    }

    package func openBundle(at path: String) throws -> PhotoRecord {
        let v = try vaults.unlocked()
        var st = stat()
        guard stat(path, &st) == 0 else { throw AgentError(.notFound, "cannot read \(path)") }
        guard Int(st.st_size) <= LocaphotoFile.maxFileSize, let data = FileManager.default.contents(atPath: path) else {
            throw AgentError(
                .invalidRequest, "\(path) is larger than the \(LocaphotoFile.maxFileSize >> 20) MiB bundle limit")
        }
        let header: BundleHeader
        let payload: [UInt8]?
        do {
            (header, payload) = try LocaphotoFile.decode(data)
        } catch let e as FormatError where e.code == .unsupportedVersion {
            throw AgentError(.unsupported, e.message)  // refused for its content: exit status 65
        }
        let opener = try BundleOpener(
            algorithm: header.algorithm, iv: header.iv, encryptedKey: header.encryptedKey,
            recipientPublicKey: header.recipient,
            recipient: identity.signingKey)
        var plain: [UInt8]
        if opener.isStreaming {
            plain = payload!
            plain.withUnsafeMutableBytes { opener.decrypt($0) }
            _ = try opener.finish(header: header)
        } else {
            _ = try opener.finish(header: header)
            plain = try AEAD.open(
                header.algorithm, key: opener.photoKey, nonce: header.iv, ciphertext: payload!, tag: header.authTag)
        }
        defer { secureZero(&plain) }
        let imp = try v.beginImport(name: header.metadata.name)
        do {
            // Opening a bundle is a local import: the classify hook decides, as for files.
            imp.gate = try hook?.start()
            try imp.write(plain)
            let senderFP = Fingerprint(publicKey: header.sender).description
            return try imp.finish(senderFingerprint: senderFP, senderName: try store.peer(senderFP)?.name)
        } catch {
            imp.abort()
            throw error
        }
    }
}
