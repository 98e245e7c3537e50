// Publishing our one service through an AvahiEntryGroup, with collision
// renaming. Poll thread (or poll lock) only.
import CAvahi

extension Discovery {
    /// Adds and commits our service if there is one and it is not in the group
    /// yet. A local name conflict (another client of the same daemon uses the
    /// name) fails add_service at once with AVAHI_ERR_COLLISION; a conflict with
    /// another host shows up later as AVAHI_ENTRY_GROUP_COLLISION. Both rename.
    func publish(_ c: OpaquePointer) {
        guard let ad = advertisement, !groupFilled else { return }
        guard avahi_client_get_state(c) == AVAHI_CLIENT_S_RUNNING else { return }  // see clientChanged
        if group == nil {
            group = avahi_entry_group_new(
                c, { g, state, ud in Discovery.from(ud).groupChanged(g, state) }, userdata)
            guard group != nil else {
                warn("cannot create an Avahi entry group: \(avahiErrorText(avahi_client_errno(c)))")
                return
            }
        }
        var name = publishedName ?? ad.name
        // Bounded: avahi_alternative_service_name always yields a new name, but a
        // daemon that keeps refusing must not spin the poll thread forever.
        for _ in 0..<32 {
            let result = withStringList(ad.txt) { list in
                avahi_entry_group_add_service_strlst(
                    group, AvahiIfIndex(AVAHI_IF_UNSPEC), AvahiProtocol(AVAHI_PROTO_UNSPEC),
                    AvahiPublishFlags(0), name, serviceType, nil, nil, ad.port, list)
            }
            if Int(result) == AVAHI_ERR_COLLISION {
                let next = alternativeName(name)
                yield(.collision(old: name, new: next))
                name = next
                avahi_entry_group_reset(group)
                continue
            }
            publishedName = name
            guard result >= 0 else {
                warn("cannot publish '\(name)': \(avahiErrorText(result))")
                avahi_entry_group_reset(group)
                return
            }
            let committed = avahi_entry_group_commit(group)
            guard committed >= 0 else {
                warn("cannot commit '\(name)': \(avahiErrorText(committed))")
                avahi_entry_group_reset(group)
                return
            }
            groupFilled = true
            return
        }
        warn("giving up publishing: too many name collisions (last tried '\(name)')")
    }

    func groupChanged(_ g: OpaquePointer?, _ state: AvahiEntryGroupState) {
        guard let g else { return }
        switch state {
        case AVAHI_ENTRY_GROUP_ESTABLISHED:
            if let publishedName { yield(.published(name: publishedName)) }

        case AVAHI_ENTRY_GROUP_COLLISION:
            // Someone on the network already owns the name: pick "name #2" etc.
            guard let old = publishedName else { return }
            let next = alternativeName(old)
            publishedName = next
            yield(.collision(old: old, new: next))
            avahi_entry_group_reset(g)
            groupFilled = false
            if let c = avahi_entry_group_get_client(g) { publish(c) }

        case AVAHI_ENTRY_GROUP_FAILURE:
            let c = avahi_entry_group_get_client(g)
            warn("publishing failed: \(c.map { avahiErrorText(avahi_client_errno($0)) } ?? "unknown error")")

        default:  // UNCOMMITED, REGISTERING: nothing to report
            break
        }
    }

    /// Applies a new advertisement (update(advertisement:), under the poll lock).
    func apply(_ new: ServiceAdvertisement) {
        let old = advertisement
        advertisement = new
        if let old, old == new { return }
        if old?.name != new.name { publishedName = nil }  // a new desired name starts afresh
        guard let c = client, avahi_client_get_state(c) == AVAHI_CLIENT_S_RUNNING else {
            return  // published once the daemon is running
        }
        // TXT-only change: update the record in place, no goodbye/re-probe, so
        // peers simply see new data.
        if let old, let group, let name = publishedName, groupFilled,
            old.name == new.name, old.port == new.port
        {
            let result = withStringList(new.txt) { list in
                avahi_entry_group_update_service_txt_strlst(
                    group, AvahiIfIndex(AVAHI_IF_UNSPEC), AvahiProtocol(AVAHI_PROTO_UNSPEC),
                    AvahiPublishFlags(0), name, serviceType, nil, list)
            }
            if result >= 0 { return }
            // e.g. still probing: fall back to re-registering
        }
        resetGroup()
        publish(c)
    }

    /// Withdraws our records (the group object itself is reused).
    func resetGroup() {
        if let group, groupFilled { avahi_entry_group_reset(group) }
        groupFilled = false
    }

    func alternativeName(_ name: String) -> String {
        guard let alt = avahi_alternative_service_name(name) else { return name + " #2" }
        defer { avahi_free(alt) }
        return String(cString: alt)
    }
}
