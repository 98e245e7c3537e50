"""LocalSend's multicast groups from the outside, for test_lan.py: listen for one datagram on a
group joined on one interface, or send one there. Run inside a LAN host (lan.sh exec):

    multicast_probe.py listen 4 IFACE_ADDRESS      # 224.0.0.167 joined on the interface of that IPv4 address
    multicast_probe.py listen 6 IFNAME             # ff12::fd3a:e420 joined on IFNAME
    multicast_probe.py send 4 IFACE_ADDRESS JSON   # one datagram to 224.0.0.167 out of that interface

`listen` prints the first datagram's JSON and its source as one JSON line; it gives up after 60 s
(a hang guard) with status 1.
"""

from __future__ import annotations

import json
import socket
import struct
import sys

GROUP4, GROUP6, PORT = "224.0.0.167", "ff12::fd3a:e420", 53317


def listen(family: str, where: str) -> int:
    if family == "4":
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.setsockopt(socket.IPPROTO_IP, 49, 0)  # IP_MULTICAST_ALL off: this socket's own groups only
        s.bind(("0.0.0.0", PORT))
        s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, socket.inet_aton(GROUP4) + socket.inet_aton(where))
    else:
        s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        s.bind(("::", PORT))
        index = socket.if_nametoindex(where)
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_JOIN_GROUP,
                     socket.inet_pton(socket.AF_INET6, GROUP6) + struct.pack("@I", index))
    print("ready", flush=True)
    s.settimeout(60)
    try:
        data, source = s.recvfrom(65536)
    except socket.timeout:
        return 1
    print(json.dumps({"from": source[0], "device": json.loads(data)}), flush=True)
    return 0


def send(family: str, where: str, body: str) -> int:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(where))
    s.sendto(body.encode(), (GROUP4, PORT))
    return 0


if __name__ == "__main__":
    verb, family, where = sys.argv[1:4]
    sys.exit(listen(family, where) if verb == "listen" else send(family, where, sys.argv[4]))
