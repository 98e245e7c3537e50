// The Locafoto web app: the state comes from the /v1 calls, and changes arrive on the event
// stream (`GET /v1/events` as server-sent events); nothing polls. Text from peers (names, file
// names, messages) only ever goes into `textContent`, never into markup. A module: strict, and
// nothing of it is a global of the page.
const $ = (id) => document.getElementById(id);

// An element with attributes/properties and children (strings become text nodes).
function el(tag, props, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (k === "class") e.className = v;
    else if (k === "on") for (const [ev, f] of Object.entries(v)) e.addEventListener(ev, f);
    else if (k === "dataset") Object.assign(e.dataset, v);
    else e[k] = v;
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}

function bytes(n) {
  if (n === undefined || n === null) return "";
  const u = ["B", "KiB", "MiB", "GiB"];
  let i = 0;
  while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
  return (i ? n.toFixed(1) : n) + " " + u[i];
}

// 42s, 3m05s: what is left at the current rate.
function duration(s) {
  s = Math.max(0, Math.round(s));
  return s < 60 ? s + "s" : Math.floor(s / 60) + "m" + String(s % 60).padStart(2, "0") + "s";
}

// "3 of 40 · 12.3 MiB of 45.0 MiB · 4.2 MiB/s · 8s left": a transfer's numbers.
function numbers(done, total, rate, item, items) {
  const parts = [];
  if (items > 1 && item) parts.push(item + " of " + items);
  parts.push(bytes(done || 0) + " of " + bytes(total || 0));
  if (rate > 0) {
    parts.push(bytes(Math.round(rate)) + "/s");
    if (total > done) parts.push(duration((total - done) / rate) + " left");
  }
  return parts.join(" · ");
}

function notice(text) {
  const n = $("notice");
  n.textContent = text || "";
  n.hidden = !text;
}

// A /v1 call. The body, if any, is JSON (or a File for an upload). Errors carry the agent's message.
async function api(method, path, body) {
  const init = { method, headers: {}, credentials: "same-origin" };
  if (body instanceof Blob) {
    init.body = body;
    init.headers["Content-Type"] = "application/octet-stream";
  } else if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers["Content-Type"] = "application/json";
  }
  const r = await fetch(path, init);
  const text = await r.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch (e) { data = null; }
  if (r.status === 401) loggedOut();
  if (!r.ok) {
    const err = new Error((data && data.error && data.error.message) || ("the agent answered " + r.status));
    err.code = data && data.error && data.error.code;
    throw err;
  }
  return data;
}

function loggedOut() {
  notice("You are logged out (the agent restarted, or you logged out). Run `locafoto web --open` to log in again.");
  $("live").textContent = "logged out";
  $("live").className = "badge off";
}

// ---------- views ----------
function show(view) {
  for (const b of document.querySelectorAll("button.tab")) b.classList.toggle("current", b.dataset.view === view);
  for (const s of document.querySelectorAll("section.view")) s.hidden = s.id !== "view-" + view;
  if (view === "vault") loadVault();
  if (view === "peers") loadLocalSend().catch((e) => notice(e.message));
}

// ---------- status ----------
let status = null;
async function loadStatus() {
  status = await api("GET", "/v1/status");
  $("node").textContent = status.name + " [" + status.fingerprint + "]";
  renderVaultState();
}

// ---------- inbox ----------
async function loadInbox() {
  const offers = await api("GET", "/v1/inbox?items=50");
  const list = $("inbox-list");
  list.replaceChildren();
  const waiting = offers.filter((o) => o.state === "pending" || o.state === "interrupted");
  $("inbox-count").textContent = waiting.length ? "(" + waiting.length + ")" : "";
  $("inbox-empty").hidden = offers.length > 0;
  for (const o of offers) list.append(offerCard(o));
}

function offerCard(o) {
  const localSend = o.sender.fingerprint.startsWith("localsend:");
  const noCertificate = o.sender.fingerprint.startsWith("localsend:unverified:");
  const trust = o.sender.trusted ? el("span", { class: "trusted" }, "trusted")
    : el("span", { class: "untrusted" },
      noCertificate ? "LocalSend, no certificate" : localSend ? "LocalSend, not verified" : "not trusted");
  const items = el("div", { class: "items" });
  o.items.forEach((it, i) => {
    // Previews come with the offer when the sender made them (`preview` says which), or
    // follow it while `previewsPending` says more may come (`offer.preview` redraws);
    // one that went meanwhile (the offer ended) hides itself.
    let img = null;
    if (it.preview) {
      img = el("img", { alt: "", loading: "lazy", src: "/v1/inbox/" + encodeURIComponent(o.id) + "/items/" + i + "/preview" });
      img.addEventListener("error", () => img.remove());
    } else if (o.previewsPending) {
      img = el("div", { class: "preview-coming", title: "preview on its way" });
    }
    items.append(el("div", { class: "item" }, img, it.name, el("br"), bytes(it.bytes)));
  });
  if (o.itemCount > o.items.length) items.append(el("div", { class: "item" }, "… and " + (o.itemCount - o.items.length) + " more"));
  const card = el("div", { class: "card offer", dataset: { offer: o.id } },
    el("h3", {}, o.sender.name + " offers " + o.itemCount + " photo" + (o.itemCount === 1 ? "" : "s") + " (" + bytes(o.totalBytes) + ")"),
    el("div", { class: "fp" }, o.sender.fingerprint, " · ", trust, o.via ? " · via relay " + o.via.name : ""),
    o.message ? el("p", {}, o.message) : null,
    items);
  const actions = el("div", { class: "actions" });
  if (o.state === "pending") {
    actions.append(
      el("button", { class: "primary accept", textContent: "Accept", on: { click: () => decide(o.id, "accept", card) } }),
      el("button", { class: "danger reject", textContent: "Reject", on: { click: () => decide(o.id, "reject", card) } }));
  } else if (o.state === "accepted") {
    // Being received now (its progress is under "Receiving"): it can be stopped.
    actions.append(el("span", { class: "status" }, "receiving…"),
      el("button", { class: "danger reject", textContent: "Stop", on: { click: () => decide(o.id, "reject", card) } }));
  } else {
    actions.append(el("span", { class: "status" }, o.state + (o.state === "interrupted" ? ": waits for the sender to come back" : "")),
      el("button", { class: "danger reject", textContent: "Reject", on: { click: () => decide(o.id, "reject", card) } }));
  }
  card.append(actions);
  return card;
}

async function decide(id, action, card) {
  for (const b of card.querySelectorAll("button")) b.disabled = true;
  try {
    const r = await api("POST", "/v1/inbox/" + encodeURIComponent(id) + "/" + action);
    card.querySelector(".actions").replaceChildren(el("span", { class: "status" }, r.state + (r.message ? ": " + r.message : "")));
  } catch (e) {
    notice(e.message);
    for (const b of card.querySelectorAll("button")) b.disabled = false;
  }
}

// ---------- receiving (offers accepted and arriving) ----------
const receiving = new Map();  // offer id -> {name, fingerprint, bytes, size, items, state}

async function loadReceiving() {
  const offers = await api("GET", "/v1/inbox?all=1&limit=50&items=0");
  for (const o of offers) {
    // Names and sizes only: the state comes from the events (an answer that left before
    // offer.finished must not turn a finished receive back into a running one).
    // Offers that were received (or are being received) stay listed across a reload;
    // ones never accepted (rejected, expired) do not belong here.
    const known = receiving.get(o.id);
    const r = known || (o.state === "accepted" && o.connected ? { bytes: 0, state: "receiving" }
      : ["completed", "failed", "interrupted"].includes(o.state) ? { bytes: o.totalBytes, state: o.state, message: o.message, at: o.receivedAt } : null);
    if (r) {
      Object.assign(r, { peer: o.sender.name, size: o.totalBytes, items: o.itemCount });
      receiving.set(o.id, r);
    }
  }
  renderReceiving();
}

function renderReceiving() {
  const list = $("receiving-list");
  list.replaceChildren();
  $("receiving-empty").hidden = receiving.size > 0;
  // What is arriving now comes first.
  const order = [...receiving].sort(([, a], [, b]) => (a.state === "receiving" ? 0 : 1) - (b.state === "receiving" ? 0 : 1));
  for (const [id, r] of order) {
    const done = r.state !== "receiving";
    const row = el("div", { class: "card receiving" + (done ? "" : " live"), dataset: { offer: id, state: r.state } },
      el("h3", {}, "From " + (r.peer || "?") + ": " + (r.items || "?") + " photo(s), " + bytes(r.size)),
      el("progress", { max: r.size || 1, value: done && r.state === "completed" ? (r.size || 1) : (r.bytes || 0) }),
      done ? null : el("div", { class: "numbers" }, numbers(r.bytes, r.size, r.rate, r.item, r.items)),
      el("div", { class: "actions" },
        el("span", { class: "status state" }, r.state + (r.message ? ": " + r.message : "")),
        done ? null : el("button", { class: "danger", textContent: "Stop", on: { click: () => api("POST", "/v1/inbox/" + encodeURIComponent(id) + "/reject").catch((e) => notice(e.message)) } })));
    list.append(row);
  }
}

// ---------- sending (outgoing transfers) ----------
const transfers = new Map();  // id -> snapshot

async function loadTransfers() {
  const list = await api("GET", "/v1/transfers");
  transfers.clear();
  for (const t of list) transfers.set(t.id, t);
  renderTransfers();
}

const ended = new Set(["done", "rejected", "expired", "failed", "cancelled"]);
const progressOf = new Map();  // transfer id -> {rate, item}: from transfer.progress events

function renderTransfers() {
  const list = $("transfers-list");
  list.replaceChildren();
  $("transfers-empty").hidden = transfers.size > 0;
  // Running transfers first, then the newest.
  const order = [...transfers.values()].sort((a, b) =>
    (ended.has(a.state) ? 1 : 0) - (ended.has(b.state) ? 1 : 0) || String(b.startedAt).localeCompare(String(a.startedAt)));
  for (const t of order) {
    const cancellable = !ended.has(t.state) && t.state !== "held";
    const live = progressOf.get(t.id) || {};
    list.append(el("div", { class: "card transfer" + (t.state === "sending" ? " live" : ""), dataset: { transfer: t.id, state: t.state } },
      el("h3", {}, "To " + t.peer.name + ": " + (t.items || []).length + " photo(s), " + bytes(t.totalBytes)),
      el("progress", { max: t.totalBytes || 1, value: t.state === "done" ? (t.totalBytes || 1) : (t.sentBytes || 0) }),
      t.state === "sending" ? el("div", { class: "numbers" }, numbers(t.sentBytes, t.totalBytes, live.rate, live.item, (t.items || []).length)) : null,
      el("div", { class: "actions" },
        el("span", { class: "status state" }, t.state + (t.message ? ": " + t.message : "")),
        cancellable ? el("button", { class: "danger cancel", textContent: "Cancel", on: { click: (ev) => cancelTransfer(t.id, ev.target) } }) : null)));
  }
}

async function cancelTransfer(id, button) {
  button.disabled = true;
  try {
    const t = await api("POST", "/v1/transfers/" + encodeURIComponent(id) + "/cancel");
    transfers.set(t.id, t);
    renderTransfers();
  } catch (e) {
    notice(e.message);
    button.disabled = false;
  }
}

// ---------- peers ----------
let peers = [];
const codes = new Map();  // fingerprint -> code

async function loadPeers() {
  peers = await api("GET", "/v1/peers");
  for (const c of await api("GET", "/v1/pairing")) codes.set(c.fingerprint, c.code);
  const body = $("peers-table").querySelector("tbody");
  body.replaceChildren();
  for (const p of peers) {
    const trustButton = p.trust === "trusted"
      ? el("button", { class: "untrust", textContent: "Untrust", on: { click: () => peerAction(p, "untrust") } })
      : el("button", { class: "trust", textContent: "Trust", on: { click: () => peerAction(p, "trust") } });
    body.append(el("tr", { dataset: { fingerprint: p.fingerprint } },
      el("td", {}, p.name, p.warning ? el("div", { class: "untrusted" }, p.warning) : null),
      el("td", { class: "fp" }, p.fingerprint),
      el("td", {}, p.online ? "online" : "offline"),
      el("td", { class: p.trust === "trusted" ? "trusted" : "" }, p.trust),
      el("td", { class: "code" }, codes.get(p.fingerprint) || ""),
      el("td", { class: "actions" },
        el("button", { class: "pair", textContent: "Pair", disabled: !p.online, on: { click: () => peerAction(p, "pair") } }), trustButton)));
  }
  renderSendPeers();
}

// ---------- LocalSend ----------
// LocalSend devices the page can send to (while LocalSend is on): heard nearby or met before.
let localSendTargets = [];

async function loadLocalSend() {
  const s = await api("GET", "/v1/localsend");
  const byFingerprint = new Map();
  if (s.enabled) {
    for (const d of s.devices) byFingerprint.set(d.fingerprint, { alias: d.alias, fingerprint: d.fingerprint, nearby: false });
    for (const n of s.nearby || []) byFingerprint.set(n.fingerprint, { alias: n.alias, fingerprint: n.fingerprint, nearby: true });
  }
  localSendTargets = [...byFingerprint.values()].sort((a, b) => a.alias.localeCompare(b.alias));
  renderSendPeers();
  $("localsend-on").checked = s.enabled;
  $("localsend-state").textContent = !s.enabled ? "off"
    : s.port ? "on, port " + s.port + " · this computer's certificate " + s.fingerprint.slice(0, 16) + "…"
      : "on, not listening: " + (s.problem || "starting");
  const body = $("localsend-table").querySelector("tbody");
  body.replaceChildren();
  for (const d of s.devices) {
    const trusted = d.trust === "trusted";
    body.append(el("tr", { dataset: { fingerprint: d.fingerprint } },
      el("td", {}, d.alias, d.deviceModel ? " (" + d.deviceModel + ")" : ""),
      el("td", { class: "fp" }, d.fingerprint),
      el("td", { class: trusted ? "trusted" : "untrusted" }, trusted ? "trusted" : "LocalSend, not verified"),
      el("td", { class: "actions" },
        el("button", { textContent: trusted ? "Untrust" : "Trust", on: { click: () => localSendAction(d, trusted ? "untrust" : "trust") } }),
        el("button", { class: "quiet", textContent: "Forget", on: { click: () => localSendAction(d, "forget") } }))));
  }
}

async function localSendAction(d, action) {
  try {
    await api("POST", "/v1/localsend/devices/" + encodeURIComponent(d.fingerprint) + "/" + action);
    await loadLocalSend();
  } catch (e) {
    notice(e.message);
  }
}

async function switchLocalSend(on) {
  $("localsend-state").textContent = on ? "turning on…" : "turning off…";
  try {
    await api("PUT", "/v1/localsend", { enabled: on });
  } catch (e) {
    notice(e.message);
  }
  await loadLocalSend();
}

async function peerAction(p, action) {
  try {
    const r = await api("POST", "/v1/peers/" + encodeURIComponent(p.fingerprint) + "/" + action);
    if (action === "pair") codes.set(r.fingerprint, r.code);
    await loadPeers();
  } catch (e) {
    notice(e.message);
  }
}

// ---------- sending from the page ----------
let chosen = [];

function renderSendPeers() {
  const box = $("send-peers");
  const checked = new Set([...box.querySelectorAll("input:checked")].map((i) => i.value));
  box.replaceChildren(el("legend", {}, "To"));
  if (!peers.length && !localSendTargets.length) box.append(el("p", { class: "empty" }, "No peer is known yet."));
  for (const p of peers) {
    box.append(el("label", { class: "peer-choice" },
      el("input", { type: "checkbox", value: p.fingerprint, checked: checked.has(p.fingerprint), on: { change: updateSendButton } }),
      " " + p.name + " ", el("span", { class: "fp" }, p.fingerprint.split("-")[0] + (p.online ? "" : " (offline)"))));
    box.append(el("br"));
  }
  // A LocalSend device is named by its certificate's fingerprint, so that `send` pins it.
  for (const d of localSendTargets) {
    const value = "localsend:" + d.fingerprint;
    box.append(el("label", { class: "peer-choice" },
      el("input", { type: "checkbox", value, checked: checked.has(value), on: { change: updateSendButton } }),
      " " + d.alias + " ", el("span", { class: "untrusted" }, "LocalSend, not verified"),
      " ", el("span", { class: "fp" }, d.fingerprint.slice(0, 16) + "…" + (d.nearby ? "" : " (not heard lately)"))));
    box.append(el("br"));
  }
  updateSendButton();
}

function choose(files) {
  chosen = chosen.concat([...files]);
  $("send-chosen").replaceChildren(...chosen.map((f) => el("li", {}, f.name + " (" + bytes(f.size) + ")")));
  updateSendButton();
}

function updateSendButton() {
  const to = [...$("send-peers").querySelectorAll("input:checked")];
  $("send-go").disabled = !chosen.length || !to.length;
  $("send-pin-row").hidden = !to.some((i) => i.value.startsWith("localsend:"));
}

// Each file is uploaded to the agent (held in its memory, never on disk), then one send
// names the peers and the uploads.
async function sendChosen() {
  const to = [...$("send-peers").querySelectorAll("input:checked")].map((i) => i.value);
  const st = $("send-status");
  const pin = to.some((t) => t.startsWith("localsend:")) ? $("send-pin").value : "";
  if (pin && to.length > 1) {
    // A device's PIN is for that device alone (the agent refuses it for several).
    st.textContent = "Not sent: a PIN goes to one LocalSend device; send to it alone.";
    return;
  }
  $("send-go").disabled = true;
  try {
    const uploads = [];
    showUploads(chosen);
    for (const [i, f] of chosen.entries()) {
      st.textContent = "Uploading " + f.name + " (" + (i + 1) + " of " + chosen.length + ")…";
      const u = await upload(f, i);
      uploads.push(u.id);
    }
    const body = { peers: to, uploads };
    if (pin) body.pin = pin;
    const r = await api("POST", "/v1/send", body);
    $("send-pin").value = "";
    st.textContent = "Sending: " + r.transfers.length + " transfer(s) started.";
    chosen = [];
    $("send-chosen").replaceChildren();
    $("send-files").value = "";
    for (const t of r.transfers) transfers.set(t.id, t);
    renderTransfers();
  } catch (e) {
    st.textContent = "Not sent: " + e.message;
  }
  updateSendButton();
}

// ---------- vault ----------
function renderVaultState() {
  const v = status ? status.vault : "absent";
  $("vault-locked").hidden = v !== "locked";
  $("vault-absent").hidden = v !== "absent";
  $("vault-open").hidden = v !== "unlocked";
}

let vaultTimer = null;
// Imports come in bursts (one event per photo): one reload for a burst.
function reloadVaultSoon() {
  clearTimeout(vaultTimer);
  vaultTimer = setTimeout(loadVault, 300);
}

let vaultGeneration = 0;
async function loadVault() {
  if ($("view-vault").hidden || !status || status.vault !== "unlocked") return;
  // Only the newest load draws: an older one (started by an event before the user changed
  // a filter) must not put back the old filter or the old photos.
  const generation = ++vaultGeneration;
  const albumSel = $("filter-album"), tagSel = $("filter-tag");
  const album = albumSel.value, tag = tagSel.value, favorite = $("filter-favorite").checked;
  try {
    const q = new URLSearchParams({ sort: "importedAt", limit: galleryLimit(album, tag, favorite) });
    if (album) q.set("album", album);
    if (tag) q.set("tag", tag);
    if (favorite) q.set("favorite", "1");
    const [albums, tags, photos] = await Promise.all([api("GET", "/v1/albums"), api("GET", "/v1/tags"), api("GET", "/v1/photos?" + q)]);
    if (generation !== vaultGeneration) return;
    albumSel.replaceChildren(el("option", { value: "" }, "All photos"),
      ...albums.filter((a) => !a.locked).map((a) => el("option", { value: a.name, selected: a.name === album }, a.name + " (" + (a.photoCount ?? "") + ")")));
    tagSel.replaceChildren(el("option", { value: "" }, "Any"),
      ...tags.map((t) => el("option", { value: t.tag, selected: t.tag === tag }, t.tag + " (" + t.photoCount + ")")));
    const g = $("gallery");
    g.replaceChildren(...photos.map(thumb));
    $("gallery-empty").hidden = photos.length > 0;
    galleryLoaded(q, photos.length, generation);
  } catch (e) {
    if (e.code === "vaultLocked") { await loadStatus(); } else notice(e.message);
  }
}

const shownPhotos = new Map();  // id -> record, for the viewer's previous / next
function thumb(p) {
  shownPhotos.set(p.id, p);
  const src = "/v1/photos/" + p.id + "/thumbnail";
  const img = el("img", { alt: "", loading: "lazy", src });
  const button = el("button", { class: "thumb", title: p.name || p.id, dataset: { photo: p.id }, on: { click: () => openPhoto(p) } },
    img, p.favorite ? el("span", { class: "fav" }, "★") : null, el("span", { class: "name" }, p.name || p.id.slice(0, 8)));
  // The agent makes a thumbnail when first asked (a second for a large HEIC): until it
  // comes, or for a photo it cannot decode, a placeholder with the name, never a broken
  // image. One more try a little later, for one made meanwhile.
  let tries = 0;
  img.addEventListener("error", () => {
    img.hidden = true;
    button.classList.add("placeholder");
    if (tries++ === 0) setTimeout(() => { img.src = src + "?retry=1"; }, 3000);
  });
  img.addEventListener("load", () => { img.hidden = false; button.classList.remove("placeholder"); });
  return button;
}

let viewing = null;
function openPhoto(p) {
  viewing = p;
  $("viewer-title").textContent = (p.name || p.id) + " · " + bytes(p.originalBytes) + (p.sender ? " · from " + p.sender.name : "");
  $("viewer-favorite").textContent = p.favorite ? "★ Favourite" : "☆ Add to favourites";
  showFull(p);
  const [before, after] = neighbours(p.id);
  $("viewer-prev").disabled = !before;
  $("viewer-next").disabled = !after;
  showDetails(p);
  $("viewer").hidden = false;
}

// The photos before and after `id` in the gallery as shown.
function neighbours(id) {
  const ids = [...document.querySelectorAll("#gallery .thumb")].map((b) => b.dataset.photo);
  const i = ids.indexOf(id);
  return [i > 0 ? shownPhotos.get(ids[i - 1]) : null, i >= 0 && i < ids.length - 1 ? shownPhotos.get(ids[i + 1]) : null];
}

function step(by) {
  if (!viewing) return;
  const next = neighbours(viewing.id)[by < 0 ? 0 : 1];
  if (next) openPhoto(next);
}

// Details: what the record says at once, what the indexer read (GET /v1/photos/{id}) after.
async function showDetails(p) {
  const rows = (pairs) => pairs.filter(([, v]) => v !== undefined && v !== null && v !== "")
    .flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, String(v))]);
  const base = [["Name", p.name], ["Size", bytes(p.originalBytes)], ["Format", p.format],
    ["Taken", p.capturedAt ? new Date(p.capturedAt).toLocaleString() : ""], ["Imported", p.importedAt ? new Date(p.importedAt).toLocaleString() : ""],
    ["From", p.sender ? p.sender.name + " (" + p.sender.fingerprint + ")" : ""], ["Tags", (p.tags || []).join(", ")]];
  $("viewer-details").replaceChildren(...rows(base));
  try {
    const d = await api("GET", "/v1/photos/" + encodeURIComponent(p.id));
    if (viewing !== p) return;
    const m = d.media || {};
    const camera = [m.cameraMake, m.cameraModel].filter(Boolean).join(" ");
    $("viewer-details").replaceChildren(...rows([...base,
      ["Pixels", m.width && m.height ? m.width + " × " + m.height : ""], ["Camera", camera],
      ["Location", m.hasLocation === true ? "yes (GPS in its EXIF)" : m.hasLocation === false ? "none" : ""],
      ["Albums", (d.albums || []).map((a) => a.name || a).join(", ")]]));
  } catch (e) { /* the record's own details stay */ }
}

function closePhoto() {
  $("viewer").hidden = true;
  $("viewer-image").removeAttribute("src");
  viewing = null;
}

async function toggleFavorite() {
  if (!viewing) return;
  // The photo asked about: the viewer may have moved on to another by the time the answer comes.
  const photo = viewing;
  const action = photo.favorite ? "unfavorite" : "favorite";
  try {
    await api("POST", "/v1/photos/batch", { selection: { ids: [photo.id] }, action });
    photo.favorite = action === "favorite";
    if (viewing === photo) $("viewer-favorite").textContent = photo.favorite ? "★ Favourite" : "☆ Add to favourites";
    reloadVaultSoon();
  } catch (e) { notice(e.message); }
}

// The passphrase goes in a POST body (never a URL) and the field is emptied at once.
async function unlock(ev) {
  ev.preventDefault();
  const field = $("unlock-passphrase");
  const passphrase = field.value;
  field.value = "";
  $("unlock-status").textContent = "Unlocking…";
  try {
    await api("POST", "/v1/unlock", { passphrase });
    $("unlock-status").textContent = "";
  } catch (e) {
    $("unlock-status").textContent = e.message;
  }
}

// ---------- the gallery, page by page ----------
// A vault may hold 100,000 photos: the gallery asks for one page at a time (the photo
// query's limit and offset), and for the next when its end comes near the screen
// (IntersectionObserver on the "Load more" button, which is also clickable).
// `?pageSize=N` on the app's address sets the page (1–500; tests use a small one).
const galleryPage = Math.min(500, Math.max(1, parseInt(new URLSearchParams(location.search).get("pageSize"), 10) || 200));
// A reload (after an event) asks again for what is shown, but never for more than this
// in one answer: past it, the next pages come back as the user scrolls.
const galleryReloadMax = Math.max(galleryPage * 10, 500);
const gallery = { key: null, query: null, shown: 0, more: false, loading: false, paused: false };

// The `limit` of a (re)load: one page for a new filter, what is shown for the same one.
function galleryLimit(album, tag, favorite) {
  const key = JSON.stringify([album, tag, favorite]);
  const same = key === gallery.key;
  gallery.key = key;
  return String(same ? Math.min(Math.max(gallery.shown, galleryPage), galleryReloadMax) : galleryPage);
}

// After loadVault drew the first photos: the next page starts after them.
function galleryLoaded(q, count, generation) {
  if (generation !== vaultGeneration) return;
  gallery.query = new URLSearchParams(q);
  gallery.query.delete("offset");
  gallery.shown = count;
  gallery.more = count >= Number(q.get("limit"));
  gallery.paused = false;
  renderGalleryMore();
  maybeLoadMore();
}

function renderGalleryMore() {
  const b = $("gallery-more");
  b.hidden = !gallery.more;
  b.disabled = gallery.loading;
  b.textContent = gallery.loading ? "Loading…" : "Load more";
}

// Near the end of the screen (and the vault shown): load the next page.
function maybeLoadMore() {
  const b = $("gallery-more");
  if (!gallery.more || gallery.loading || gallery.paused || b.hidden || $("view-vault").hidden || $("vault-open").hidden) return;
  const r = b.getBoundingClientRect();
  if (r.height > 0 && r.top < window.innerHeight + 400) loadMorePhotos();
}

async function loadMorePhotos() {
  if (!gallery.more || gallery.loading || !gallery.query) return;
  const generation = vaultGeneration;
  gallery.loading = true;
  renderGalleryMore();
  try {
    const q = new URLSearchParams(gallery.query);
    q.set("limit", String(galleryPage));
    q.set("offset", String(gallery.shown));
    const photos = await api("GET", "/v1/photos?" + q);
    // A reload or another filter since: its answer is the gallery now.
    if (generation !== vaultGeneration) return;
    // Photos imported meanwhile shift the offsets: a photo already shown is not drawn twice.
    const g = $("gallery");
    const have = new Set([...g.children].map((t) => t.dataset.photo));
    g.append(...photos.filter((p) => !have.has(p.id)).map(thumb));
    gallery.shown += photos.length;
    gallery.more = photos.length >= galleryPage;
  } catch (e) {
    gallery.paused = true;  // not again by itself: the button retries
    notice(e.message);
  } finally {
    gallery.loading = false;
    renderGalleryMore();
    maybeLoadMore();  // also after a discarded answer: the newer load may have waited for this one
  }
}

function setUpGalleryPages() {
  const b = $("gallery-more");
  b.addEventListener("click", () => { gallery.paused = false; loadMorePhotos(); });
  new IntersectionObserver((entries) => {
    if (entries.some((e) => e.isIntersecting)) maybeLoadMore();
  }, { rootMargin: "0px 0px 400px 0px" }).observe(b);
}

// ---------- vault changes made elsewhere ----------
// photo.changed, photo.deleted and album.changed come from any client (the CLI, another
// tab, this one): the gallery, its filters and an open photo are redrawn.
function vaultChanged(e) {
  reloadVaultSoon();
  const p = viewing;
  if (!p || (e.photo && e.photo !== p.id)) return;
  api("GET", "/v1/photos/" + encodeURIComponent(p.id)).then((d) => {
    if (viewing === p) openPhoto(Object.assign(p, d.photo));
  }).catch((err) => { if (err.code === "notFound" && viewing === p) closePhoto(); });
}

// ---------- the photo full size ----------
// Browsers show no HEIC/HEIF or TIFF: /display answers those as a JPEG made in memory by
// the agent (and the others as imported). Should even that fail (a damaged photo), the
// page says so; the original can always be downloaded.
function showFull(p) {
  const src = "/v1/photos/" + encodeURIComponent(p.id) + "/display";
  const img = $("viewer-image");
  if (img.getAttribute("src") !== src) {
    $("viewer-failed").hidden = true;
    img.src = src;
  }
  const a = $("viewer-download");
  a.href = "/v1/photos/" + encodeURIComponent(p.id) + "/original";
  a.download = p.name || p.id;
}

function setUpViewer() {
  const img = $("viewer-image");
  img.addEventListener("error", () => { if (img.getAttribute("src")) $("viewer-failed").hidden = false; });
}

// ---------- upload progress ----------
// fetch() reports no upload progress; XMLHttpRequest does (upload.onprogress). Each file
// gets a row in #send-uploads: its bar, bytes so far, and its state (data-state: waiting,
// uploading, uploaded, failed), which stays after the send.
function showUploads(files) {
  $("send-uploads").replaceChildren(...files.map((f) => el("li", { class: "upload", dataset: { state: "waiting", updates: "0" } },
    el("span", { class: "name" }, f.name), el("progress", { max: f.size || 1, value: 0 }), el("span", { class: "status" }, "waiting"))));
}

function upload(f, i) {
  const row = $("send-uploads").children[i];
  const bar = row.querySelector("progress"), said = row.querySelector(".status");
  row.dataset.state = "uploading";
  return new Promise((resolve, reject) => {
    const x = new XMLHttpRequest();
    x.open("POST", "/v1/uploads?name=" + encodeURIComponent(f.name));
    x.setRequestHeader("Content-Type", "application/octet-stream");
    x.upload.addEventListener("progress", (ev) => {
      if (!ev.lengthComputable) return;
      bar.max = ev.total || 1;
      bar.value = ev.loaded;
      said.textContent = bytes(ev.loaded) + " of " + bytes(ev.total);
      row.dataset.updates = String(Number(row.dataset.updates) + 1);
    });
    x.addEventListener("load", () => {
      let data = null;
      try { data = x.responseText ? JSON.parse(x.responseText) : null; } catch (e) { data = null; }
      if (x.status === 401) loggedOut();
      if (x.status >= 200 && x.status < 300) {
        bar.value = bar.max;
        row.dataset.state = "uploaded";
        said.textContent = "uploaded";
        resolve(data);
      } else {
        const err = new Error((data && data.error && data.error.message) || ("the agent answered " + x.status));
        err.code = data && data.error && data.error.code;
        row.dataset.state = "failed";
        said.textContent = err.message;
        reject(err);
      }
    });
    x.addEventListener("error", () => {
      row.dataset.state = "failed";
      said.textContent = "failed";
      reject(new Error("the upload of " + f.name + " failed (is the agent running?)"));
    });
    x.send(f);
  });
}

// ---------- the event stream ----------
function loadAll() {
  return Promise.all([loadStatus(), loadInbox(), loadReceiving(), loadTransfers(), loadPeers(), loadLocalSend()]).then(loadVault)
    .catch((e) => notice(e.message));
}

function connect() {
  const es = new EventSource("/v1/events");
  const on = (kind, f) => es.addEventListener(kind, (m) => f(JSON.parse(m.data)));
  // `ready` comes first on every (re)connection: read the state then, so nothing is missed.
  on("ready", () => {
    $("live").textContent = "live";
    $("live").className = "badge on";
    notice("");
    loadAll();
  });
  on("missed", loadAll);
  on("offer.received", (e) => {
    // A trusted peer's offer is accepted at once.
    if (e.state === "accepted" && !receiving.has(e.offer)) {
      receiving.set(e.offer, { peer: e.peer && e.peer.name, size: e.totalBytes, items: e.items, bytes: 0, state: "receiving" });
      renderReceiving();
    }
    loadInbox();
    // A LocalSend device that shows a certificate is listed from its first offer on.
    if (e.peer && e.peer.fingerprint.startsWith("localsend:")) loadLocalSend().catch((err) => notice(err.message));
  });
  // Late previews arrive one by one: the inbox is redrawn once they pause.
  let previewTimer = null;
  on("offer.preview", () => {
    clearTimeout(previewTimer);
    previewTimer = setTimeout(loadInbox, 250);
  });
  on("offer.decided", (e) => {
    loadInbox();
    if (e.state === "accepted" && !receiving.has(e.offer)) {
      receiving.set(e.offer, { bytes: 0, state: "receiving" });
      renderReceiving();
      loadReceiving();
    }
  });
  on("item.progress", (e) => {
    const r = receiving.get(e.offer) || { state: "receiving" };
    Object.assign(r, { bytes: e.bytes, size: e.totalBytes, items: e.items, rate: e.bytesPerSecond || r.rate,
      item: e.item !== undefined && e.item !== null ? e.item + 1 : r.item });
    receiving.set(e.offer, r);
    renderReceiving();
  });
  on("item.imported", reloadVaultSoon);
  on("photo.indexed", reloadVaultSoon);
  on("import.finished", reloadVaultSoon);
  for (const kind of ["photo.changed", "photo.deleted", "album.changed"]) on(kind, vaultChanged);
  on("offer.finished", (e) => {
    const r = receiving.get(e.offer);
    if (r) {
      Object.assign(r, { state: e.state, message: e.message, peer: r.peer || (e.peer && e.peer.name), size: e.totalBytes, items: e.items });
      renderReceiving();
    }
    loadInbox();
    reloadVaultSoon();
  });
  on("transfer.state", async (e) => {
    try {
      const t = await api("GET", "/v1/transfers/" + encodeURIComponent(e.transfer));
      transfers.set(t.id, t);
      renderTransfers();
    } catch (err) { notice(err.message); }
  });
  on("transfer.progress", (e) => {
    const t = transfers.get(e.transfer);
    if (!t) return;
    t.sentBytes = e.bytes;
    if (e.totalBytes) t.totalBytes = e.totalBytes;
    t.state = t.state === "offered" ? "sending" : t.state;
    const p = progressOf.get(e.transfer) || {};
    progressOf.set(e.transfer, { rate: e.bytesPerSecond || p.rate, item: e.item !== undefined && e.item !== null ? e.item + 1 : p.item });
    renderTransfers();
  });
  on("peer.appeared", loadPeers);
  on("peer.left", loadPeers);
  on("vault.unlocked", () => loadStatus().then(loadVault));
  on("vault.locked", () => loadStatus().then(() => $("gallery").replaceChildren()));
  es.addEventListener("error", () => {
    $("live").textContent = "reconnecting…";
    $("live").className = "badge off";
    // The browser reconnects by itself; a stream refused (logged out, agent gone) is closed for good.
    if (es.readyState === EventSource.CLOSED) {
      api("GET", "/v1/status").then(() => setTimeout(connect, 1000)).catch(() => {});
    }
  });
}

document.addEventListener("DOMContentLoaded", () => {
  for (const b of document.querySelectorAll("button.tab")) b.addEventListener("click", () => show(b.dataset.view));
  $("logout").addEventListener("click", () => api("POST", "/logout").then(loggedOut).catch((e) => notice(e.message)));
  $("send-files").addEventListener("change", (ev) => choose(ev.target.files));
  $("send-go").addEventListener("click", sendChosen);
  $("localsend-on").addEventListener("change", (ev) => switchLocalSend(ev.target.checked));
  const drop = $("drop");
  drop.addEventListener("dragover", (ev) => { ev.preventDefault(); drop.classList.add("over"); });
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", (ev) => { ev.preventDefault(); drop.classList.remove("over"); choose(ev.dataTransfer.files); });
  for (const id of ["filter-album", "filter-tag", "filter-favorite"]) $(id).addEventListener("change", loadVault);
  $("lock").addEventListener("click", () => api("POST", "/v1/lock").catch((e) => notice(e.message)));
  $("unlock-form").addEventListener("submit", unlock);
  $("viewer-close").addEventListener("click", closePhoto);
  $("viewer-favorite").addEventListener("click", toggleFavorite);
  $("viewer-prev").addEventListener("click", () => step(-1));
  $("viewer-next").addEventListener("click", () => step(1));
  document.addEventListener("keydown", (ev) => {
    if (ev.key === "Escape") closePhoto();
    else if (!$("viewer").hidden && ev.key === "ArrowLeft") step(-1);
    else if (!$("viewer").hidden && ev.key === "ArrowRight") step(1);
  });
  setUpGalleryPages();
  setUpViewer();
  connect();
});
