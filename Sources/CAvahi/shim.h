#ifndef LOCAFOTO_CAVAHI_SHIM_H
#define LOCAFOTO_CAVAHI_SHIM_H
#include <avahi-client/client.h>
#include <avahi-client/publish.h>
#include <avahi-client/lookup.h>
#include <avahi-common/thread-watch.h>
#include <avahi-common/error.h>
#include <avahi-common/malloc.h>
#include <avahi-common/alternative.h>
#include <avahi-common/strlst.h>
#include <avahi-common/address.h>
#include <avahi-common/domain.h>
#include <avahi-common/timeval.h>

/* Helpers for LocafotoDiscovery. They exist because the AvahiPoll vtable wants
 * absolute `struct timeval` deadlines (avahi_elapse_time does that in C), and
 * because poking into the AvahiAddress union is clearer in C than in Swift. */

/* A one-shot timer on the poll's own event loop, firing `ms` from now. */
static inline AvahiTimeout *lf_avahi_timeout_new(const AvahiPoll *api, unsigned ms,
                                                 AvahiTimeoutCallback cb, void *userdata) {
    struct timeval tv;
    avahi_elapse_time(&tv, ms, 0);
    return api->timeout_new(api, &tv, cb, userdata);
}

/* Re-arm a timer (also one that already fired) to fire `ms` from now. */
static inline void lf_avahi_timeout_update(const AvahiPoll *api, AvahiTimeout *t, unsigned ms) {
    struct timeval tv;
    avahi_elapse_time(&tv, ms, 0);
    api->timeout_update(t, &tv);
}

static inline void lf_avahi_timeout_free(const AvahiPoll *api, AvahiTimeout *t) {
    api->timeout_free(t);
}

/* fe80::/10: such an address is only usable together with its interface. */
static inline int lf_avahi_address_is_ipv6_link_local(const AvahiAddress *a) {
    return a->proto == AVAHI_PROTO_INET6
        && a->data.ipv6.address[0] == 0xfe
        && (a->data.ipv6.address[1] & 0xc0) == 0x80;
}
#endif
