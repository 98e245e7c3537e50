import Foundation
import LocafotoClock
import LocafotoInbox
import LocafotoLocalSendServer
import LocafotoMediaWorker
import LocafotoNode
import LocafotoPeers
import LocafotoReceiving
import LocafotoSending
import LocafotoTransfers
import LocafotoVault
import Logging

/// The control API's controllers, one per resource, made here from the node's services: the
/// agent hands its services over once, and each controller keeps only those it uses.
package struct Controllers: Sendable {
    package let peers: PeersController
    package let inbox: InboxController
    package let transfers: TransfersController
    package let filters: FiltersController
    package let photos: PhotosController
    package let albums: AlbumsController
    package let imports: ImportsController
    package let vault: VaultController
    package let keys: KeysController
    package let bundles: BundlesController
    package let localSend: LocalSendController
    package let events: EventsController

    /// `sendsNothing`: a relay's (it sends nothing of its own). `alias`: the node's name as
    /// LocalSend devices see it.
    package init(
        store: AgentStore, identity: Identity, home: NodeHome, clock: any AgentClock, events: EventHub,
        logger: Logger, vaults: VaultHandle, activity: VaultActivity, importer: Importer, mediaHeads: MediaHeads,
        media: MediaJobs, hook: ClassifyHook?, inbox: Inbox, receiver: Receiver, directory: PeerDirectory,
        pairing: PairingBook, outbox: Outbox, sender: Sender, uploads: UploadStore, sendsNothing: Bool,
        localSendSwitch: LocalSendSwitch, localSendReception: LocalSendReception,
        alias: @escaping @Sendable () -> String
    ) {
        let use = VaultUse(vaults, activity: activity)
        peers = PeersController(
            store: store, directory: directory, probe: sender.peerProbe, pairing: pairing, inbox: inbox)
        self.inbox = InboxController(
            store: store, inbox: inbox, receiver: receiver, vaults: vaults, identity: identity)
        transfers = TransfersController(
            outbox: outbox, sender: sender, uploads: uploads, vaults: use, sendsNothing: sendsNothing)
        filters = FiltersController(vaults: use, events: events, clock: clock)
        photos = PhotosController(vaults: use, events: events, media: media)
        albums = AlbumsController(vaults: use, events: events)
        imports = ImportsController(vaults: use, events: events, hook: hook, clock: clock, logger: logger)
        vault = VaultController(
            vaults: use, events: events, importer: importer, mediaHeads: mediaHeads, store: store,
            identityFile: home.identityFile, logger: logger)
        keys = KeysController(vaults: use, importer: importer)
        bundles = BundlesController(vaults: use, identity: identity, store: store, directory: directory, hook: hook)
        localSend = LocalSendController(
            store: store, home: home, switchboard: localSendSwitch, reception: localSendReception, clock: clock,
            alias: alias)
        self.events = EventsController(events: events)
    }
}
