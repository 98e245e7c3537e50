import Foundation
import LocafotoControl
import LocafotoErrors
import LocafotoNode
import LocafotoPeers

/// The life of one outgoing transfer as a value: what the control API shows of it (its
/// snapshot, whose `phase` counts changes), whether its user asked to cancel, and whether it
/// still holds the photos' bytes. Changes come in as calls and go out as `Action`s, which
/// `OutgoingTransfer` carries out after its lock: no I/O, no lock, no clock read here (the time
/// comes in with the change), so every rule is tested as a value (`TransferLifeTests`).
package struct TransferLife {
    package typealias Snapshot = TransferSnapshot

    /// What the holder does after a change, in order.
    package enum Action {
        /// Wake the clients waiting for the next phase.
        case wakeWaiters
        /// A change of state, message or end: `transfer.state` with the snapshot.
        case announceState(Snapshot)
        /// Only bytes moved: `transfer.progress` (thinned by the event hub).
        case announceProgress(Snapshot)
        /// The transfer let go of its photos' bytes: drop them from its plan, then tell those
        /// waiting for it.
        case letGoOfBytes(tell: [@Sendable () -> Void])
        /// The work set to run before the end becomes visible (forget the stored plan).
        case beforeEnd(@Sendable () -> Void)
        /// The transfer ended: its progress key can be forgotten.
        case ended
    }

    package private(set) var snapshot: Snapshot
    package private(set) var cancelRequested = false
    /// When the last session broke (the resume window runs from it); nil: it never did.
    package private(set) var interruptedAt: Date?
    /// Failed resume attempts in a row and when the next may start (back-off).
    package private(set) var resumeRetry = ResumeRetry()
    /// The state the transfer let go of its photos' bytes in; nil while it holds them.
    package private(set) var letGoIn: TransferSnapshot.State?
    private var waitingForLetGo: [@Sendable () -> Void] = []
    private var workBeforeEnd: (@Sendable () -> Void)?

    package init(_ snapshot: Snapshot) {
        self.snapshot = snapshot
    }

    /// Any change of the snapshot; a change of state, message or end is a new phase.
    package mutating func update(_ change: (inout Snapshot) -> Void) -> [Action] {
        let before = (snapshot.state, snapshot.message, snapshot.finishedAt)
        let sent = snapshot.sentBytes
        change(&snapshot)
        guard before == (snapshot.state, snapshot.message, snapshot.finishedAt) else {
            snapshot.phase += 1
            return [.wakeWaiters, .announceState(snapshot)]
        }
        return sent != snapshot.sentBytes ? [.announceProgress(snapshot)] : []
    }

    /// The end, in two steps whose actions run in between: first what must be done before the
    /// end is visible (the bytes let go of, the stored plan forgotten), so that whoever sees the
    /// transfer finished sees them gone; then `end`.
    package mutating func ending(in state: TransferSnapshot.State) -> [Action] {
        var actions = letGoOfBytes(in: state)
        if let work = workBeforeEnd { actions.append(.beforeEnd(work)) }
        return actions
    }

    /// The end itself: a new phase.
    package mutating func end(
        _ state: TransferSnapshot.State, _ message: String?, code: AgentError.Code?, at date: Date
    ) -> [Action] {
        snapshot.state = state
        snapshot.message = message
        snapshot.code = code
        snapshot.finishedAt = date
        snapshot.phase += 1
        return [.wakeWaiters, .announceState(snapshot), .ended]
    }

    /// The transfer no longer needs the photos' bytes (it ended, or a relay holds them): once.
    package mutating func letGoOfBytes(in state: TransferSnapshot.State) -> [Action] {
        guard letGoIn == nil else { return [] }
        letGoIn = state
        defer { waitingForLetGo = [] }
        return [.letGoOfBytes(tell: waitingForLetGo)]
    }

    /// `then` runs once the bytes are let go of: true if it must run now (they are).
    package mutating func whenLetGoOfBytes(_ then: @escaping @Sendable () -> Void) -> Bool {
        if letGoIn != nil { return true }
        waitingForLetGo.append(then)
        return false
    }

    package mutating func beforeEnding(_ work: @escaping @Sendable () -> Void) {
        workBeforeEnd = work
    }

    package mutating func requestCancel() {
        cancelRequested = true
    }

    /// A session broke and the transfer can resume. A resume that did not get as far as its
    /// offer (still `connecting`) backs off and keeps its first break; one that did starts the
    /// count over, and so does the resume window, as the receiver's runs from its latest break.
    package mutating func interrupt(_ message: String, at now: Date, resumeBase base: Duration) -> [Action] {
        if snapshot.state == .connecting {
            interruptedAt = interruptedAt ?? now
            resumeRetry.failed(now: now, base: base)
        } else {
            interruptedAt = now
            resumeRetry.reachedPeer()
        }
        return update {
            $0.state = .interrupted
            $0.message = message
        }
    }

    /// Read back from the store after a restart: interrupted since `date`.
    package mutating func interrupted(since date: Date) {
        interruptedAt = date
    }

    /// A resume attempt starts at the peer's `endpoints`.
    package mutating func resuming(at endpoints: [PeerEndpoint]) {
        resumeRetry.attempting(endpoints)
    }
}
