import LocafotoControl
import LocafotoNode

/// A node's event as a line of `GET /v1/events` (protocol/control-api.md "Events"): the one
/// place the API's shape of an event is made.
extension ControlEvent {
    package init(_ published: PublishedEvent) {
        guard let happened = published.event else {
            self.init(seq: published.seq, at: published.at, kind: .ready)
            return
        }
        self.init(seq: published.seq, at: published.at, kind: Self.kind(of: happened))
        switch happened {
        case .offerReceived(let n), .offerFinished(let n):
            offer = n.offer
            peer = PeerRef(n.peer)
            items = n.items
            totalBytes = n.totalBytes
            state = n.state
            name = n.firstItem
            message = n.message
        case .offerPreview(let offer, let item):
            self.offer = offer
            self.item = item
        case .offerDecided(let offer, let state, let message):
            self.offer = offer
            self.state = state
            self.message = message
        case .itemProgress(let offer, let item, let items, let totalBytes, let progress):
            self.offer = offer
            self.item = item
            self.items = items
            self.totalBytes = totalBytes
            show(progress)
        case .itemImported(let offer, let item, let name, let state, let photo, let message):
            self.offer = offer
            self.item = item
            self.name = name
            self.state = state
            self.photo = photo
            self.message = message
        case .transferState(let news, let state, let sentBytes, let message):
            show(news)
            self.state = state
            bytes = sentBytes
            self.message = message
        case .transferProgress(let news, let progress):
            show(news)
            show(progress)
        case .importProgress(let job, let found, let processed, let name, let progress):
            self.job = job
            items = found
            item = processed
            self.name = name
            show(progress)
        case .importFinished(let job, let state, let found, let processed, let bytes, let message):
            self.job = job
            self.state = state
            items = found
            item = processed
            self.bytes = bytes
            self.message = message
        case .photoIndexed(let photo):
            self.photo = photo
        case .photosChanged(let change, let count, let photo):
            state = change
            items = count
            self.photo = photo
        case .photosDeleted(let count, let photo):
            items = count
            self.photo = photo
        case .albumChanged(let action, let album, let count):
            state = action
            name = album
            items = count
        case .peerAppeared(let p), .peerLeft(let p):
            peer = PeerRef(p)
        case .vaultLocked(let reason):
            message = reason
        case .vaultUnlocked:
            break
        }
    }

    static func kind(of event: NodeEvent) -> Kind {
        switch event {
        case .offerReceived: .offerReceived
        case .offerPreview: .offerPreview
        case .offerDecided: .offerDecided
        case .offerFinished: .offerFinished
        case .itemProgress: .itemProgress
        case .itemImported: .itemImported
        case .transferState: .transferState
        case .transferProgress: .transferProgress
        case .importProgress: .importProgress
        case .importFinished: .importFinished
        case .photoIndexed: .photoIndexed
        case .photosChanged: .photoChanged
        case .photosDeleted: .photoDeleted
        case .albumChanged: .albumChanged
        case .peerAppeared: .peerAppeared
        case .peerLeft: .peerLeft
        case .vaultLocked: .vaultLocked
        case .vaultUnlocked: .vaultUnlocked
        }
    }

    private mutating func show(_ progress: NodeEvent.Progress) {
        bytes = progress.bytes
        bytesPerSecond = progress.bytesPerSecond
    }

    private mutating func show(_ news: NodeEvent.TransferNews) {
        transfer = news.transfer
        offer = news.offer
        peer = PeerRef(news.peer)
        totalBytes = news.totalBytes
        items = news.items
        item = news.item
        name = news.itemName
    }
}

extension PeerRef {
    init(_ peer: EventPeer) { self.init(name: peer.name, fingerprint: peer.fingerprint) }
}
