"""A stand-in for systemd-logind on a private D-Bus bus (logind itself needs systemd as PID 1
and a real seat, which this machine and CI do not have): it owns org.freedesktop.login1 and
emits the two signals the agent follows, one per line read on stdin:

    sleep true|false     org.freedesktop.login1.Manager.PrepareForSleep(b) on /org/freedesktop/login1
    lock PATH            org.freedesktop.login1.Session.Lock on PATH

It prints "ready" once it owns the name and "sent" after each signal is flushed to the bus.
Runs under Debian's python3 with python3-dbus (scripts/setup.sh installs it)."""

import sys

import dbus
import dbus.lowlevel

bus = dbus.bus.BusConnection(sys.argv[1])
if bus.request_name("org.freedesktop.login1") != dbus.bus.REQUEST_NAME_REPLY_PRIMARY_OWNER:
    sys.exit("could not own org.freedesktop.login1 on the private bus")
print("ready", flush=True)
for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    if words[0] == "sleep":
        m = dbus.lowlevel.SignalMessage("/org/freedesktop/login1", "org.freedesktop.login1.Manager", "PrepareForSleep")
        m.append(dbus.Boolean(words[1] == "true"))
    elif words[0] == "lock":
        m = dbus.lowlevel.SignalMessage(words[1], "org.freedesktop.login1.Session", "Lock")
    else:
        sys.exit(f"unknown command {words[0]}")
    bus.send_message(m)
    bus.flush()
    print("sent", flush=True)
