// Discovery: publish one service and browse+resolve a service type through
// avahi-daemon (libavahi-client over D-Bus).
//
// Threading rule: every Avahi object (client, group, browser, resolvers,
// timer) and every var in the "poll-thread state" block below is only touched
// on the AvahiThreadedPoll thread (inside callbacks) or by another thread while
// it holds avahi_threaded_poll_lock. Data leaving that world goes through the
// AsyncStream continuation, guarded by `output`.
import CAvahi
import LocafotoErrors
import Synchronization

public final class Discovery: @unchecked Sendable {
    public static let defaultServiceType = "_locafoto._tcp"

    public let serviceType: String

    // MARK: Cross-thread state

    private enum Phase { case idle, running, stopped }
    private struct Lifecycle {
        var phase: Phase = .idle
        var poll: OpaquePointer?  // AvahiThreadedPoll*
    }
    /// Serialises start/stop/update. Never taken on the poll thread, so holding it
    /// while waiting for avahi_threaded_poll_lock (or joining the thread) is safe.
    private let lifecycle = Mutex(Lifecycle())
    /// The event sink. A leaf lock: taken on the poll thread while it holds the
    /// poll lock, so nothing may wait for the poll lock while holding this.
    private let output = Mutex<AsyncStream<DiscoveryEvent>.Continuation?>(nil)
    /// Keeps self alive while the poll thread may call back with our pointer as
    /// userdata (released by stop()).
    private var keepAlive: Discovery?

    // MARK: Poll-thread state (see the threading rule above)

    var api: UnsafePointer<AvahiPoll>?
    var client: OpaquePointer?  // AvahiClient*
    /// A client that reported FAILURE; freed from the retry timer, not inside
    /// its own callback, so libavahi-client never runs on a freed object.
    var deadClient: OpaquePointer?
    var retryTimer: OpaquePointer?  // AvahiTimeout*
    var retryDelayMs: UInt32 = Discovery.firstRetryMs
    var daemonUp: Bool? = nil  // nil: not known yet (nothing yielded)

    var advertisement: ServiceAdvertisement?
    /// The name we register (the desired one, or Avahi's alternative after a collision).
    var publishedName: String?
    var group: OpaquePointer?  // AvahiEntryGroup*
    /// True once entries were added+committed to `group`, false after a reset.
    var groupFilled = false

    var browser: OpaquePointer?  // AvahiServiceBrowser*
    var resolvers: [ServiceKey: OpaquePointer] = [:]  // AvahiServiceResolver*
    var browseFlags: [ServiceKey: AvahiLookupResultFlags] = [:]
    /// NEWs not yet matched by a REMOVE, per entry: the resolver lives while this is > 0.
    var browseCount: [ServiceKey: Int] = [:]
    var services: [ServiceKey: DiscoveredService] = [:]

    static let firstRetryMs: UInt32 = 250
    static let maxRetryMs: UInt32 = 2000

    public init(serviceType: String = Discovery.defaultServiceType, advertisement: ServiceAdvertisement?) {
        self.serviceType = serviceType
        self.advertisement = advertisement
    }

    /// Starts the poll thread, publishing (if an advertisement was given) and
    /// browsing+resolving `serviceType`. A missing daemon or bus is reported as
    /// `.daemonUnavailable` and retried until `stop()`; this only throws for
    /// invalid input, a second start, or when the event loop cannot be created.
    /// Call `stop()` when done: a started Discovery keeps itself alive until then
    /// (the poll thread holds a pointer to it).
    public func start() throws -> AsyncStream<DiscoveryEvent> {
        try lifecycle.withLock { life in
            guard life.phase == .idle else {
                throw DiscoveryError(.alreadyStarted, "this Discovery was already started; create a new one")
            }
            if let error = validate(serviceType: serviceType) { throw error }
            if let ad = advertisement, let error = validate(ad) { throw error }

            guard let poll = avahi_threaded_poll_new() else {
                throw DiscoveryError(.pollFailed, "cannot create the Avahi event loop (out of memory?)")
            }
            let (stream, continuation) = AsyncStream.makeStream(of: DiscoveryEvent.self)
            output.withLock { $0 = continuation }
            api = avahi_threaded_poll_get(poll)
            keepAlive = self
            guard avahi_threaded_poll_start(poll) >= 0 else {
                avahi_threaded_poll_free(poll)
                output.withLock { $0 = nil }
                keepAlive = nil
                throw DiscoveryError(.pollFailed, "cannot start the Avahi event loop thread (thread limit reached?)")
            }
            life.poll = poll
            life.phase = .running
            // The client callback may run inside avahi_client_new; with the lock
            // held that still obeys the threading rule.
            avahi_threaded_poll_lock(poll)
            connect()
            avahi_threaded_poll_unlock(poll)
            return stream
        }
    }

    /// Stops publishing and browsing and finishes the stream. Idempotent. Must not
    /// be called on the poll thread (it joins it); events are delivered through
    /// the stream, so user code never runs there.
    public func stop() {
        lifecycle.withLock { life in
            guard life.phase == .running, let poll = life.poll else {
                life.phase = .stopped
                return
            }
            life.phase = .stopped
            let continuation = output.withLock { sink in
                defer { sink = nil }  // nothing is yielded from here on
                return sink
            }
            avahi_threaded_poll_stop(poll)  // joins the thread: we own everything now
            teardown()
            avahi_threaded_poll_free(poll)
            life.poll = nil
            continuation?.finish()
            keepAlive = nil
        }
    }

    /// Re-publishes with new TXT/port/name. A TXT-only change is done in place
    /// (no re-probing); a new name or port re-registers the service. An invalid
    /// advertisement is reported on stderr and ignored (the old one stays).
    public func update(advertisement new: ServiceAdvertisement) {
        if let error = validate(new) {
            warn("update(advertisement:) ignored: \(error)")
            return
        }
        lifecycle.withLock { life in
            guard life.phase == .running, let poll = life.poll else {
                advertisement = new  // picked up by start(); harmless after stop()
                return
            }
            avahi_threaded_poll_lock(poll)
            apply(new)
            avahi_threaded_poll_unlock(poll)
        }
    }

    // MARK: Helpers shared by the extensions

    var userdata: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    static func from(_ userdata: UnsafeMutableRawPointer?) -> Discovery {
        Unmanaged<Discovery>.fromOpaque(userdata!).takeUnretainedValue()
    }

    func yield(_ event: DiscoveryEvent) {
        output.withLock { sink in _ = sink?.yield(event) }
    }

    /// Frees every Avahi object. Called by stop() after the poll thread ended.
    private func teardown() {
        if let timer = retryTimer, let api { lf_avahi_timeout_free(api, timer) }
        retryTimer = nil
        // Freeing a client also frees its groups, browsers and resolvers.
        if let client { avahi_client_free(client) }
        if let deadClient { avahi_client_free(deadClient) }
        client = nil
        deadClient = nil
        forgetClientObjects()
    }
}

/// Identifies one browse result: the same instance is reported separately per
/// interface and protocol.
struct ServiceKey: Hashable {
    var name: String
    var interface: AvahiIfIndex
    var proto: AvahiProtocol
    var domain: String
}
