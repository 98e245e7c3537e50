// Browsing serviceType and resolving every entry (one per interface and
// protocol). Poll thread only.
import CAvahi

extension Discovery {
    func ensureBrowser(_ c: OpaquePointer) {
        guard browser == nil else { return }
        browser = avahi_service_browser_new(
            c, AvahiIfIndex(AVAHI_IF_UNSPEC), AvahiProtocol(AVAHI_PROTO_UNSPEC), serviceType, nil,
            AvahiLookupFlags(0),
            { b, interface, proto, event, name, type, domain, flags, ud in
                Discovery.from(ud).browserEvent(b, interface, proto, event, name, type, domain, flags)
            },
            userdata)
        if browser == nil {
            warn("cannot browse \(serviceType): \(avahiErrorText(avahi_client_errno(c))); retrying")
            scheduleRetry()
        }
    }

    private func browserEvent(
        _ b: OpaquePointer?, _ interface: AvahiIfIndex, _ proto: AvahiProtocol, _ event: AvahiBrowserEvent,
        _ name: UnsafePointer<CChar>?, _ type: UnsafePointer<CChar>?, _ domain: UnsafePointer<CChar>?,
        _ flags: AvahiLookupResultFlags
    ) {
        switch event {
        case AVAHI_BROWSER_NEW:
            guard let b, let name, let type, let domain else { return }
            let key = ServiceKey(
                name: String(cString: name), interface: interface, proto: proto, domain: String(cString: domain))
            browseFlags[key] = flags  // OUR_OWN is documented for browsers; merged into the result
            browseCount[key, default: 0] += 1
            yield(.appeared(instanceName: key.name, interfaceIndex: interface, family: ipFamily(proto)))
            guard resolvers[key] == nil else { return }
            // The resolver stays alive until the last REMOVE so later changes (TXT
            // updates, new address) are reported too. aprotocol = proto: one
            // address of the entry's own family.
            let resolver = avahi_service_resolver_new(
                avahi_service_browser_get_client(b), interface, proto, name, type, domain, proto,
                AvahiLookupFlags(0),
                { r, interface, proto, event, name, _, _, host, address, port, txt, flags, ud in
                    Discovery.from(ud).resolverEvent(r, interface, proto, event, name, host, address, port, txt, flags)
                },
                userdata)
            if let resolver {
                resolvers[key] = resolver
            } else {
                warn(
                    "cannot resolve '\(key.name)': \(avahiErrorText(avahi_client_errno(avahi_service_browser_get_client(b))))"
                )
            }

        case AVAHI_BROWSER_REMOVE:
            guard let name, let domain else { return }
            let key = ServiceKey(
                name: String(cString: name), interface: interface, proto: proto, domain: String(cString: domain))
            // No count: its NEW came before a daemon outage, whose .daemonUnavailable told users.
            let count = browseCount[key] ?? 0
            if count > 0 { yield(.removed(instanceName: key.name, interfaceIndex: interface, family: ipFamily(proto))) }
            guard count <= 1 else {
                browseCount[key] = count - 1  // another NEW of this entry is still standing
                return
            }
            browseCount[key] = nil
            if let resolver = resolvers.removeValue(forKey: key) { avahi_service_resolver_free(resolver) }
            browseFlags[key] = nil
            services[key] = nil

        case AVAHI_BROWSER_FAILURE:
            // Rare (the daemon dropped the browser); client failures arrive
            // separately. Build a new browser from the retry timer.
            let c = b.flatMap { avahi_service_browser_get_client($0) }
            warn("browsing failed: \(c.map { avahiErrorText(avahi_client_errno($0)) } ?? "unknown error"); retrying")
            if let b { avahi_service_browser_free(b) }
            browser = nil
            scheduleRetry()

        default:  // CACHE_EXHAUSTED, ALL_FOR_NOW
            break
        }
    }

    private func resolverEvent(
        _ r: OpaquePointer?, _ interface: AvahiIfIndex, _ proto: AvahiProtocol, _ event: AvahiResolverEvent,
        _ _: UnsafePointer<CChar>?, _ host: UnsafePointer<CChar>?, _ address: UnsafePointer<AvahiAddress>?,
        _ port: UInt16, _ txt: StringList?, _ flags: AvahiLookupResultFlags
    ) {
        // Find the entry by resolver pointer: the names in the callback may be
        // normalised differently from the browser's.
        guard let r, let key = resolvers.first(where: { $0.value == r })?.key else { return }
        // FAILURE (typically a timeout while records change) is not a removal:
        // the browser's REMOVE is. Keep the resolver, it reports again on success.
        guard event == AVAHI_RESOLVER_FOUND, let address else { return }
        let allFlags = flags.rawValue | (browseFlags[key]?.rawValue ?? 0)
        let service = DiscoveredService(
            instanceName: key.name,  // the browser's spelling, as in .appeared/.removed
            interfaceIndex: interface,
            family: ipFamily(address.pointee.proto),
            hostName: host.map { String(cString: $0) } ?? "",
            address: numericAddress(address, interface: interface),
            port: port,
            txt: dictionary(from: txt),
            isLocal: allFlags & AVAHI_LOOKUP_RESULT_LOCAL.rawValue != 0,
            isOwn: allFlags & AVAHI_LOOKUP_RESULT_OUR_OWN.rawValue != 0)
        guard services[key] != service else { return }  // unchanged repeat
        services[key] = service
        yield(.resolved(service))
    }
}
