// The AvahiClient: connecting, following the daemon's state, and reconnecting
// after the daemon (or the D-Bus system bus) went away. Poll thread only.
import CAvahi

extension Discovery {
    /// Creates the client. AVAHI_CLIENT_NO_FAIL makes a missing *daemon* a
    /// CONNECTING state (libavahi-client then waits for it on the bus by itself),
    /// but a missing *bus* still fails right here: retry that with our timer.
    func connect() {
        guard let api, client == nil else { return }
        var error: Int32 = 0
        let newClient = avahi_client_new(
            api, AVAHI_CLIENT_NO_FAIL,
            { c, state, ud in Discovery.from(ud).clientChanged(c, state) },
            userdata, &error)
        guard let newClient else {
            daemonLost("cannot reach avahi-daemon: the D-Bus system bus is not available (\(avahiErrorText(error)))")
            scheduleRetry()
            return
        }
        client = newClient
    }

    /// Client state callback. Use `c`, not `client`: this can run inside
    /// avahi_client_new before `client` is assigned.
    func clientChanged(_ c: OpaquePointer?, _ state: AvahiClientState) {
        guard let c else { return }
        switch state {
        case AVAHI_CLIENT_S_RUNNING:
            client = c
            retryDelayMs = Discovery.firstRetryMs
            if daemonUp != true {
                daemonUp = true
                yield(.daemonRunning)
            }
            ensureBrowser(c)
            publish(c)

        case AVAHI_CLIENT_S_REGISTERING, AVAHI_CLIENT_S_COLLISION:
            // The daemon is (re)registering its host name. Our records point at
            // that name, so withdraw them; publish() runs again on S_RUNNING.
            client = c
            ensureBrowser(c)
            resetGroup()

        case AVAHI_CLIENT_CONNECTING:
            daemonLost("avahi-daemon is not running (\(avahiErrorText(Int32(AVAHI_ERR_NO_DAEMON))))")

        case AVAHI_CLIENT_FAILURE:
            let error = avahi_client_errno(c)
            let reason =
                Int(error) == AVAHI_ERR_DISCONNECTED
                ? "lost the connection to avahi-daemon (\(avahiErrorText(error)))"
                : "avahi-daemon failed (\(avahiErrorText(error)))"
            // The client is dead for good (libavahi-client closed its bus
            // connection): drop everything it owned and build a new one.
            forgetClientObjects()
            if client == c { client = nil }
            if let previous = deadClient, previous != c { avahi_client_free(previous) }
            deadClient = c
            daemonLost(reason)
            scheduleRetry(afterMs: 0)

        default:
            break
        }
    }

    /// Yields `.daemonUnavailable` once per outage, and `.removed` for every
    /// service seen so far, since nothing tells us about them any more.
    func daemonLost(_ reason: String) {
        guard daemonUp != false else { return }
        daemonUp = false
        yield(.daemonUnavailable(reason))
        for key in services.keys.sorted(by: { $0.name < $1.name }) {
            yield(.removed(instanceName: key.name, interfaceIndex: key.interface, family: ipFamily(key.proto)))
        }
        services.removeAll()
        browseCount.removeAll()  // users forget everything on .daemonUnavailable
    }

    /// Forgets (without freeing) the objects owned by the current client: they
    /// die with it in avahi_client_free.
    func forgetClientObjects() {
        group = nil
        groupFilled = false
        browser = nil
        resolvers.removeAll()
        browseFlags.removeAll()
        browseCount.removeAll()
    }

    /// Arms the retry timer on the poll's own loop; the delay doubles up to
    /// maxRetryMs while the bus stays unreachable.
    func scheduleRetry(afterMs delay: UInt32? = nil) {
        guard let api else { return }
        let ms = delay ?? retryDelayMs
        if delay == nil { retryDelayMs = min(retryDelayMs * 2, Discovery.maxRetryMs) }
        if let retryTimer {
            lf_avahi_timeout_update(api, retryTimer, ms)
        } else {
            retryTimer = lf_avahi_timeout_new(
                api, ms, { _, ud in Discovery.from(ud).retryFired() }, userdata)
            if retryTimer == nil { warn("cannot create a retry timer; discovery stays down") }
        }
    }

    private func retryFired() {
        if let deadClient {
            avahi_client_free(deadClient)
            self.deadClient = nil
        }
        if let client {
            // Still connected: a failed browser may need re-creating.
            if avahi_client_get_state(client) == AVAHI_CLIENT_S_RUNNING { ensureBrowser(client) }
        } else {
            connect()
        }
    }
}
