# Locafoto image: the agent, or (LOCAFOTO_ROLE=relay) a store-and-forward relay. A multi-stage
# build (Swift toolchain → slim Debian runtime), running as a non-root user with its node home
# on a volume. Build: `docker build -t locafoto .`
#
# Host networking: mDNS reaches the LAN through the HOST's avahi-daemon, whose D-Bus socket is
# mounted in (the container runs no mDNS responder of its own):
#   docker run -d --network host -v locafoto:/data \
#     -v /run/dbus/system_bus_socket:/run/dbus/system_bus_socket \
#     -e LOCAFOTO_NAME=nas -e LOCAFOTO_PASSPHRASE_FILE=/run/secrets/vault locafoto
# Bridge networking: multicast does not cross the bridge, so name peers by address:
#   docker run -d -p 47820:47820 -v locafoto:/data \
#     -e LOCAFOTO_NAME=nas -e LOCAFOTO_PEERS=192.168.1.20:47820,192.168.1.21:47820 locafoto
# Without a reachable avahi-daemon the agent logs that discovery is unavailable and keeps running.
# Relay role (no vault, no passphrase): holds photos sealed to peers that are offline until they
# collect them. Only the senders on LOCAFOTO_RELAY_ALLOW (fingerprints from their `locafoto id`)
# may deposit, or anyone with LOCAFOTO_RELAY_OPEN=1; with neither it refuses to start. Agents
# use it with `locafoto agent --relay HOST:47820` (LOCAFOTO_RELAYS):
#   docker run -d -p 47820:47820 -v locafoto-relay:/data -e LOCAFOTO_ROLE=relay \
#     -e LOCAFOTO_NAME=relay -e LOCAFOTO_RELAY_ALLOW=FP1,FP2 \
#     -e LOCAFOTO_RELAY_MAX_TOTAL_BYTES=50G -e LOCAFOTO_RELAY_EXPIRY=604800 locafoto
# All variables: scripts/docker-entrypoint.sh. Health check: `docker-entrypoint.sh healthcheck`
# (`locafoto status`, or `locafoto relay status` for a relay, through the control socket).
#
# Stages: `toolchain` is the Swift image with the C libraries' development packages, `build`
# compiles in it, `runtime` is the slim Debian image without the binary, and the last (unnamed,
# the default) stage adds the binary from `build`. Where no Swift image can be pulled,
# `--target prebuilt` takes instead a binary built on a Debian 12 host (`swift build -c release
# --product locafoto --static-swift-stdlib`) from out/locafoto in the build context, on the
# same runtime stage:
#   docker build --target prebuilt -t locafoto .        (scripts/container-test.sh does this)
# The runtime packages are what `ldd locafoto` needs, plus libvips42, which the binary opens
# (dlopen) when it first makes a thumbnail or compresses a photo; a relay never does.

ARG SWIFT_IMAGE=swift:6.2-bookworm

# The Swift image plus the C libraries Package.swift's system modules and GRDB link, with their
# pkg-config files (scripts/container-test.sh checks them on plain Debian bookworm).
FROM ${SWIFT_IMAGE} AS toolchain
RUN apt-get update \
    && apt-get install -y --no-install-recommends libsodium-dev libssl-dev libgcrypt20-dev libavahi-client-dev libdbus-1-dev libsqlite3-dev \
       libvips-dev libexif-dev pkg-config \
    && rm -rf /var/lib/apt/lists/*

FROM toolchain AS build
WORKDIR /src
# Resolve dependencies in their own layer so source edits do not refetch them.
COPY Package.swift ./
RUN swift package resolve
COPY Sources ./Sources
COPY Tests ./Tests
RUN swift build -c release --product locafoto --static-swift-stdlib \
    && install -D "$(swift build -c release --show-bin-path)/locafoto" /out/locafoto

FROM debian:bookworm-slim AS runtime
LABEL org.opencontainers.image.title="locafoto" \
      org.opencontainers.image.description="Peer-to-peer LAN photo sharing agent with an encrypted vault, or a store-and-forward relay" \
      org.opencontainers.image.licenses="MIT" \
      org.opencontainers.image.source="https://example.invalid/locafoto"
RUN apt-get update \
    && apt-get install -y --no-install-recommends libsodium23 libssl3 libgcrypt20 libavahi-client3 libdbus-1-3 libsqlite3-0 \
       libvips42 libexif12 libglib2.0-0 ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 10001 locafoto \
    && useradd --system --uid 10001 --gid 10001 --home-dir /data --shell /usr/sbin/nologin locafoto \
    && mkdir -p /data && chown locafoto:locafoto /data && chmod 700 /data
COPY scripts/docker-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
USER 10001:10001
# LOCAFOTO_ROLE=relay runs a relay; its allow-list, quotas and expiry are unset here (the
# relay's defaults): LOCAFOTO_RELAY_* in scripts/docker-entrypoint.sh.
ENV LOCAFOTO_HOME=/data LOCAFOTO_PORT=47820 LOCAFOTO_ROLE=agent
VOLUME ["/data"]
EXPOSE 47820/tcp
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 CMD ["/usr/local/bin/docker-entrypoint.sh", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]

# A binary built on the host (Debian 12, same libraries as the runtime stage).
FROM runtime AS prebuilt
COPY out/locafoto /usr/local/bin/locafoto

# The default: the binary built in the Swift image.
FROM runtime
COPY --from=build /out/locafoto /usr/local/bin/locafoto
