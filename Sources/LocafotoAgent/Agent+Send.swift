import Foundation
import LocafotoCrypto
import LocafotoFormats
import LocafotoNoise
import LocafotoVault
import LocafotoWire
import NIOCore

extension Agent {
    /// Starts sending `paths` to the peer named `query`; progress is in the returned transfer.
    /// Sends files, and/or photos from the vault (`vaultPhotos`: ids of a selection).
    public func send(to query: String, paths: [String], vaultPhotos: [PhotoRecord] = [], transform: SendTransform? = nil) throws -> OutgoingTransfer {
        guard !paths.isEmpty || !vaultPhotos.isEmpty else { throw AgentError(.invalidRequest, "name at least one photo to send") }
        guard paths.count <= configuration.offerLimits.maxItems else {
            throw AgentError(.invalidRequest, "at most \(configuration.offerLimits.maxItems) photos per send")
        }
        let t = OutgoingTransfer(peer: query)
        register(t)
        Task { await self.run(t, query: query, paths: paths, vaultPhotos: vaultPhotos, transform: transform) }
        return t
    }

    private func run(_ t: OutgoingTransfer, query: String, paths: [String], vaultPhotos: [PhotoRecord], transform: SendTransform?) async {
        do {
            var items = try await PreparedItem.prepareAll(paths, maxSize: configuration.offerLimits.maxItemBytes, transform: transform)
            if !vaultPhotos.isEmpty {
                let vault = try unlockedVault()
                for record in vaultPhotos {
                    let item = try PreparedItem.fromVault(record, vault: vault)
                    items.append(try transform.map { try item.transformed($0) } ?? item)
                }
            }
            t.update { s in
                s.items = items.map { .init(name: $0.name, size: $0.size, sent: 0, status: "preparing") }
                s.totalBytes = items.reduce(0) { $0 + $1.size }
                s.originalBytes = items.reduce(0) { $0 + $1.originalSize }
            }
            // An address (`send 192.168.1.20:47820 …`) is probed first: the handshake says who answers.
            var query = query
            if StaticAddress.looksLikeAddress(query), let address = try? StaticAddress(parsing: query) {
                query = try await probe(address).fingerprint.description
            }
            let choice = try PeerResolver.resolve(query, online: directory.online, known: store.peers())
            t.update {
                $0.peer = choice.name
                $0.peerFingerprint = choice.fingerprint.description
                $0.state = .connecting
            }
            guard !choice.endpoints.isEmpty else {
                throw AgentError(.peerUnavailable, "\(choice.name) [\(choice.fingerprint.short)] is not online (not seen over mDNS)")
            }
            var lastError: (any Error)?
            for endpoint in choice.endpoints {
                let connection: PeerChannel.Async
                do {
                    connection = try await connect(to: endpoint)
                } catch {
                    lastError = error
                    continue
                }
                try await session(t, connection: connection, choice: choice, endpoint: endpoint, items: items)
                return
            }
            throw AgentError(.peerUnavailable, "cannot connect to \(choice.name): \(lastError.map { "\($0)" } ?? "no address")")
        } catch let e as AgentError {
            logger.warning("send to '\(query)' failed: \(e.message)")
            t.finish(.failed, e.message)
        } catch let e as WireError {
            t.finish(.failed, "\(e.message) [\(e.code.name)]")
        } catch {
            t.finish(.failed, "\(error)")
        }
    }

    private func session(
        _ t: OutgoingTransfer, connection: PeerChannel.Async, choice: PeerChoice, endpoint: PeerEndpoint, items: [PreparedItem]
    ) async throws {
        try await connection.executeThenClose { inbound, outbound in
            var it = inbound.makeAsyncIterator()
            let handshake: (PeerIdentity, CipherState, CipherState, [UInt8])
            do {
                // Pinning: the key behind the handshake must be the one the advertisement named.
                handshake = try await Handshake.run(
                    initiator: true, identity: identity, hello: hello, expected: choice.fingerprint,
                    next: { try await it.next() }, write: { try await outbound.write(ByteBuffer(bytes: $0)) })
            } catch let e as PinningFailure {
                let message = "REFUSED: the peer at \(endpoint.address):\(endpoint.port) advertises fingerprint \(choice.fingerprint) (\(choice.name)) but its handshake proved key \(e.peer.fingerprint). Someone may be impersonating \(choice.name); nothing was sent."
                logger.critical("\(message)")
                throw AgentError(.identityMismatch, message)
            }
            let (peer, sendCipher, receiveCipher, handshakeHash) = handshake
            pairing.record(peer, handshakeHash: handshakeHash)
            try store.sawPeer(fingerprint: peer.fingerprint, publicKey: peer.publicKey.bytes, name: peer.name, address: "\(endpoint.address):\(endpoint.port)")
            var writer = SecureWriter(outbound: outbound, cipher: sendCipher, allocator: connection.channel.allocator)
            var reader = SecureReader(cipher: receiveCipher)
            let offerID = UUID().uuidString.lowercased()
            for part in Offer.parts(id: offerID, items: items.map(\.offerItem)) {
                try await writer.send(.offer(part))
            }
            t.update {
                $0.state = .offered
                $0.offer = offerID
                $0.message = "waiting for \(peer.name) to accept"
                for i in $0.items.indices { $0.items[i].status = "offered" }
            }
            let decision = try await awaitDecision(&it, &reader, &writer, peer: peer)
            switch decision.decision {
            case .rejected:
                let why = decision.message.map { ": \($0)" } ?? ""
                t.finish(.rejected, "\(peer.name) declined the photos\(why)")
                return
            case .expired:
                t.finish(.expired, "the offer expired before \(peer.name) accepted it")
                return
            case .accepted:
                break
            }
            t.update {
                $0.state = .sending
                $0.message = nil
            }
            let handOff = InboundHandOff(iterator: it, reader: reader)
            let outcome = try await withThrowingTaskGroup(of: Bool.self) { group in
                // Results are read on their own task so that the receiver never blocks writing them
                // while this task is busy streaming data.
                group.addTask { try await self.collectResults(t, handOff, count: items.count) }
                for (index, item) in items.enumerated() {
                    try await sendItem(item, index: index, offer: offerID, to: peer, writer: &writer, progress: t)
                }
                try await writer.send(.done(Done(offer: offerID)))
                let allDone = try await group.next() ?? false
                group.cancelAll()
                return allDone
            }
            guard outcome else { throw AgentError(.peerUnavailable, "\(peer.name) closed the connection before reporting every item") }
            let s = t.current
            let failed = s.items.filter { $0.status == ItemStatus.failed.rawValue }.count
            let queued = s.items.filter { $0.status == ItemStatus.queued.rawValue }.count
            if failed > 0 {
                t.finish(.failed, "\(failed) of \(items.count) item(s) were refused by \(peer.name)")
            } else if queued > 0 {
                t.finish(.done, "\(peer.name) received \(items.count) item(s); \(queued) will be imported when they unlock their vault")
            } else {
                t.finish(.done, "\(peer.name) imported \(items.count) item(s)")
            }
        }
    }

    private func awaitDecision(
        _ it: inout NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator, _ reader: inout SecureReader,
        _ writer: inout SecureWriter, peer: PeerIdentity
    ) async throws -> Decision {
        while let frame = try await it.next() {
            switch try reader.open(frame) {
            case .ping: try await writer.send(.pong)
            case .pong: continue
            case .decision(let d): return d
            case .error(let e): throw WireError(e.code, "\(peer.name) reported: \(e.message)")
            case let m: throw WireError(.protocolViolation, "unexpected \(m.kind) while waiting for a decision")
            }
        }
        throw AgentError(.peerUnavailable, "\(peer.name) closed the connection before deciding")
    }

    /// Reads ITEM_RESULTs until every item is reported; false if the peer closed first.
    private func collectResults(_ t: OutgoingTransfer, _ h: InboundHandOff, count: Int) async throws -> Bool {
        var reported = Set<Int>()
        while reported.count < count, let frame = try await h.iterator.next() {
            switch try h.reader.open(frame) {
            case .itemResult(let r):
                guard r.item >= 0, r.item < count else { throw WireError(.protocolViolation, "result for unknown item \(r.item)") }
                reported.insert(r.item)
                t.update { s in
                    s.items[r.item].status = r.status.rawValue
                    s.items[r.item].photo = r.photo
                    s.items[r.item].code = r.code?.name
                    s.items[r.item].message = r.message
                }
            case .error(let e):
                throw WireError(e.code, "the peer reported: \(e.message)")
            case .ping, .pong:
                continue
            case let m:
                throw WireError(.protocolViolation, "unexpected \(m.kind) while sending")
            }
        }
        return reported.count == count
    }

    /// Streams one photo: ITEM_START, ITEM_DATA pieces encrypted as they are read, ITEM_END.
    private func sendItem(
        _ item: PreparedItem, index: Int, offer: String, to peer: PeerIdentity, writer: inout SecureWriter, progress t: OutgoingTransfer
    ) async throws {
        let sealer = try BundleSealer(photoID: item.id, sender: identity.signingKey, recipient: peer.publicKey)
        let metadata = BundleMetadata(originalSize: item.size, format: item.kind.uppercased(), name: item.name)
        try await writer.send(.itemStart(ItemStart(
            offer: offer, item: index, photo: item.id, algorithm: AEADAlgorithm.chacha20poly1305.name, iv: sealer.iv,
            encryptedKey: sealer.encryptedKey, offset: 0, metadata: metadata)))
        // Transformed photos are already in memory; others are streamed from their file.
        let file = item.data == nil ? try PhotoFileReader(path: item.path) : nil
        defer { file?.close() }
        var buffer = [UInt8](repeating: 0, count: WireProtocol.chunkLength)
        var offset: Int64 = 0
        while offset < item.size {
            let n = try buffer.withUnsafeMutableBytes { b -> Int in
                let want = min(b.count, Int(item.size - offset))
                let n: Int
                if let file {
                    n = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: b[..<want]))
                } else {
                    item.data!.withUnsafeBytes { src in b.copyMemory(from: UnsafeRawBufferPointer(rebasing: src[Int(offset)..<Int(offset) + want])) }
                    n = want
                }
                sealer.encrypt(UnsafeMutableRawBufferPointer(rebasing: b[..<n]))
                return n
            }
            guard n > 0 else { break }
            try await writer.sendItemData(item: UInt32(index), offset: UInt64(offset), bytes: buffer[..<n])
            offset += Int64(n)
            let sent = offset
            t.update { s in
                s.items[index].sent = sent
                s.bytesSent += Int64(n)
            }
        }
        let header = try sealer.finish(metadata: metadata)
        try await writer.send(.itemEnd(ItemEnd(offer: offer, item: index, authTag: header.authTag, signature: header.signature)))
    }
}
