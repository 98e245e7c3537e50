"""The web app in a real browser (headless Chromium from Debian, driven by Selenium) against
real agents (issue 10 §5): logging in through what `locafoto web` gives, an offer from another
agent appearing live (event stream) and accepted in the page, the photo in the gallery and open
full size, sending from the page by uploading a file, a transfer followed and cancelled, and
a locked vault unlocked from the page.

Every wait is on a condition of the page or of an agent; the timeouts are hang guards only."""

import os
import stat
import subprocess

import pytest

import lfharness as h
import webharness as w
from lfharness import finish, fixture, wait_for

JPG, PNG = fixture("sample.jpg"), fixture("sample.png")
GUARD = 60  # seconds: a hang guard on a loaded machine, never an expectation


@pytest.fixture
def browser():
    d = w.chromium_driver()
    yield d
    d.quit()


def until(driver, condition, what):
    """Waits for `condition(driver)` to be truthy; returns it. An element the page replaced while
    the condition read it (a gallery re-rendered by an event) is read again at the next poll."""
    from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait
    try:
        return WebDriverWait(driver, GUARD, poll_frequency=0.2,
                             ignored_exceptions=[StaleElementReferenceException]).until(lambda d: condition(d))
    except TimeoutException:
        said, sending, uploads = driver.execute_script(
            "const t = (id) => { const n = document.getElementById(id); return n ? n.textContent : ''; };"
            "return [t('notice'), t('send-status'),"
            " [...document.querySelectorAll('#send-uploads li')].map((r) => r.dataset.state + ': ' + r.textContent)]")
        raise AssertionError(f"timed out waiting for {what}; the page says: {said!r}; the send view says: "
                             f"{sending!r}, uploads {uploads!r}") from None


def css(driver, selector):
    from selenium.webdriver.common.by import By
    return driver.find_elements(By.CSS_SELECTOR, selector)


def click(driver, selector, what, done=None):
    """Clicks what `selector` finds, again if the page re-rendered it meanwhile (lists are
    redrawn as events arrive), until `done(driver)` holds (default: one click went through)."""
    from selenium.common.exceptions import StaleElementReferenceException, ElementClickInterceptedException

    def attempt(d):
        try:
            if done is not None and done(d):
                return True
            found = css(d, selector)
            if found:
                found[0].click()
            return done is None and bool(found)
        except (StaleElementReferenceException, ElementClickInterceptedException):
            return False
    until(driver, attempt, what)


def press_send(driver):
    """Clicks Send until the page begins a send (new rows in the upload list): a click that lands
    while the button is being drawn again, or disabled for a moment, is made again."""
    driver.execute_script("document.querySelectorAll('#send-uploads li').forEach((r) => { r.dataset.before = '1'; })")
    click(driver, "#send-go:enabled", "Send", done=lambda d: css(d, "#send-uploads li.upload:not([data-before])"))


def choose(driver, selector, value):
    """Picks the option `value` of a select once the page lists it."""
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
    from selenium.webdriver.support.ui import Select

    def attempt(d):
        try:
            Select(css(d, selector)[0]).select_by_value(value)
            return css(d, selector)[0].get_attribute("value") == value
        except (NoSuchElementException, StaleElementReferenceException, IndexError):
            return False
    until(driver, attempt, f"{value!r} in {selector}")


def tab(driver, name):
    css(driver, f'button.tab[data-view="{name}"]')[0].click()


def logged_in(driver, node):
    driver.get(w.login_url(node))
    until(driver, lambda d: d.current_url.endswith("/") and css(d, "#live.on") and node.name in css(d, "#node")[0].text,
          "the page to be live and show the node")
    assert "code=" not in driver.current_url


def test_receive_view_and_send_from_the_page(make_node, browser):
    alice = make_node("a")
    bob = make_node("b", start=False)
    w.start_web(bob, wait_discovery=True)
    alice.wait_sees(bob)
    bob.wait_sees(alice)
    logged_in(browser, bob)

    # An offer arrives while the page is open: it appears without a reload.
    sending = alice.popen("send", bob.name, str(JPG), "--json")
    text = until(browser, lambda d: "".join(c.text for c in css(d, ".offer")), "the offer to appear")
    assert alice.name in text and alice.fingerprint in text and "not trusted" in text and "sample.jpg" in text
    # The preview that came with the offer shows before the decision (at most 160 px).
    width = until(browser, lambda d: d.execute_script(
        "const i = document.querySelector('.offer .item img'); return i && i.complete && i.naturalWidth"),
        "the offer's preview")
    assert 0 < width <= 160, width
    click(browser, ".offer button.accept", "Accept")
    status, out, err = finish(sending, timeout=GUARD)
    assert status == 0, out + err
    # The receive, followed live to its end.
    received = bob.inbox(all=True)[0]["id"]
    tab(browser, "transfers")
    until(browser, lambda d: css(d, f'.receiving[data-offer="{received}"][data-state="completed"]'), "the receive completed")

    # Peers: a pairing code to compare with alice's, then trust.
    tab(browser, "peers")
    row = f'#peers-table tr[data-fingerprint="{alice.fingerprint}"]'
    click(browser, row + " button.pair", "Pair", done=lambda d: css(d, row) and css(d, row + " td.code")[0].text)
    # Read through `until`: the peers table may be drawn again between the find and the read.
    shown = until(browser, lambda d: css(d, row + " td.code")[0].text, "the pairing code")
    theirs = [c["code"] for c in alice.run("pair") if c["fingerprint"] == bob.fingerprint]
    assert shown in theirs, (shown, theirs)
    click(browser, row + " button.trust", "Trust", done=lambda d: css(d, row + " td.trusted"))
    assert bob.peer(alice.fingerprint)["trust"] == "trusted"

    # The gallery: the thumbnail (made after the import), then the photo full size.
    tab(browser, "vault")
    until(browser, lambda d: d.execute_script(
        "const i = document.querySelector('#gallery .thumb img'); return i && i.complete && i.naturalWidth"),
        "the thumbnail in the gallery")
    photo = bob.photos()[0]
    click(browser, "#gallery .thumb", "the thumbnail", done=lambda d: not css(d, "#viewer")[0].get_attribute("hidden"))
    until(browser, lambda d: d.execute_script(
        "const i = document.getElementById('viewer-image'); return i.complete && i.naturalWidth"),
        "the photo full size")
    width = browser.execute_script("return document.getElementById('viewer-image').naturalWidth")
    assert width == bob.run("show", photo["id"])["media"]["width"]
    click(browser, "#viewer-favorite", "the favourite button")
    wait_for(lambda: bob.run("list", "--favorites"), what="the photo to be a favourite", timeout=GUARD)
    click(browser, "#viewer-close", "Close", done=lambda d: css(d, "#viewer")[0].get_attribute("hidden"))

    # Albums, tags and favourites filter the gallery. They are made with the CLI while the page
    # shows the vault: album.changed and photo.changed redraw the filters, no tab switch.
    bob.run("album", "create", "Trip")
    bob.run("album", "create", "Empty")
    bob.run("album", "add", "Trip", photo["id"])
    bob.run("tag", "--add", "beach", photo["id"])
    shown = lambda d: [t.get_attribute("data-photo") for t in css(d, "#gallery .thumb")]
    for select, value, expected in [("#filter-album", "Trip", [photo["id"]]), ("#filter-album", "Empty", []),
                                    ("#filter-album", "", [photo["id"]]), ("#filter-tag", "beach", [photo["id"]])]:
        choose(browser, select, value)
        until(browser, lambda d: shown(d) == expected and css(d, "#gallery-empty")[0].is_displayed() == (not expected),
              f"the gallery for {select} = {value!r}")
    choose(browser, "#filter-tag", "")
    click(browser, "#filter-favorite", "Favourites", done=lambda d: css(d, "#filter-favorite:checked"))
    until(browser, lambda d: shown(d) == [photo["id"]], "the favourites")

    # Sending from the page: choose the peer, upload a file, follow the transfer to its end.
    tab(browser, "send")
    chosen = f'#send-peers input[value="{alice.fingerprint}"]'
    click(browser, chosen, "alice among the peers", done=lambda d: css(d, chosen + ":checked"))
    css(browser, "#send-files")[0].send_keys(str(PNG))
    press_send(browser)
    offer = alice.wait_offer(timeout=GUARD)
    assert offer["sender"]["fingerprint"] == bob.fingerprint
    assert [i["name"] for i in offer["items"]] == ["sample.png"]
    tab(browser, "transfers")
    until(browser, lambda d: css(d, f'.transfer[data-transfer="{offer["id"]}"][data-state="offered"]'), "the transfer waiting for alice")
    alice.run("accept", offer["id"])
    until(browser, lambda d: css(d, f'.transfer[data-transfer="{offer["id"]}"][data-state="done"]'), "the transfer done")
    assert [p["name"] for p in alice.photos()] == ["sample.png"]

    # Another one, cancelled from the page while alice has not decided: her inbox drops it.
    tab(browser, "send")
    click(browser, chosen, "alice among the peers", done=lambda d: css(d, chosen + ":checked"))
    css(browser, "#send-files")[0].send_keys(str(JPG))
    press_send(browser)
    second = wait_for(lambda: [o for o in alice.inbox() if o["id"] != offer["id"]], timeout=GUARD, what="the second offer")[0]
    tab(browser, "transfers")
    click(browser, f'.transfer[data-transfer="{second["id"]}"][data-state="offered"] button.cancel', "Cancel")
    until(browser, lambda d: css(d, f'.transfer[data-transfer="{second["id"]}"][data-state="cancelled"]'), "the transfer cancelled")
    wait_for(lambda: not alice.inbox(), timeout=GUARD, what="alice's inbox to drop the cancelled offer")


def test_open_logs_in_through_a_private_file_and_a_locked_vault_unlocks_in_the_page(make_node, browser, workdir):
    bob = make_node("b", start=False)
    w.start_web(bob, locked=True)
    # xdg-open itself would start a desktop browser; this stand-in (the one mock here) records
    # what it was given, and the real Chromium opens that.
    fake = workdir / "bin"
    fake.mkdir()
    (fake / "xdg-open").write_text(f"#!/bin/sh\nprintf '%s' \"$1\" > {workdir}/opened\n")
    os.chmod(fake / "xdg-open", 0o755)
    env = {**h.clean_env(), "PATH": f"{fake}:{os.environ['PATH']}"}
    r = subprocess.run(bob.cmd("web", "--open", json=False), capture_output=True, text=True, env=env, timeout=h.CLI_TIMEOUT)
    assert r.returncode == 0, r.stdout + r.stderr
    opened = (workdir / "opened").read_text()
    # What xdg-open (and the browser's command line) sees: a path, no code; the file is the user's alone.
    assert "code=" not in opened and opened == str(bob.home / "web-login.html")
    assert stat.S_IMODE(os.stat(opened).st_mode) == 0o600
    assert "code=" not in r.stdout

    browser.get("file://" + opened)
    until(browser, lambda d: d.current_url.startswith("http://127.0.0.1:") and d.current_url.endswith("/") and css(d, "#live.on"),
          "the app, logged in")
    tab(browser, "vault")
    until(browser, lambda d: css(d, "#vault-locked") and css(d, "#vault-locked")[0].is_displayed(), "the locked vault said")
    field = css(browser, "#unlock-passphrase")[0]
    field.send_keys(h.PASSPHRASE)
    css(browser, "#unlock-form button")[0].click()
    until(browser, lambda d: css(d, "#vault-open")[0].is_displayed(), "the vault open")
    assert field.get_attribute("value") == ""
    assert bob.run("status")["vault"] == "unlocked"


def test_progress_in_both_directions(make_node, browser, workdir):
    """Both agents send at most 256 KiB/s (agent --limit-rate), so a 2 MiB photo takes about 8 s
    each way: long enough for the page to show a transfer part-way, whatever the machine's load."""
    big = workdir / "big.jpg"
    big.write_bytes(JPG.read_bytes() + bytes(2 << 20))
    alice = make_node("a", start=False)
    alice.start("--limit-rate", "256K")
    bob = make_node("b", start=False)
    w.start_web(bob, "--limit-rate", "256K", wait_discovery=True)
    alice.wait_sees(bob)
    bob.wait_sees(alice)
    logged_in(browser, bob)

    def part_way(selector):
        def check(d):
            return d.execute_script(
                "const p = document.querySelector(arguments[0]); return p && p.value > 0 && p.value < p.max", selector)
        return check

    # Receiving: accepted in the page, followed part-way, then completed.
    sending = alice.popen("send", bob.name, str(big), "--json")
    click(browser, ".offer button.accept", "Accept")
    received = wait_for(lambda: [o["id"] for o in bob.inbox(all=True) if o["state"] == "accepted"], timeout=GUARD, what="the accepted offer")[0]
    tab(browser, "transfers")
    until(browser, part_way(f'.receiving[data-offer="{received}"] progress'), "the receive part-way")
    # Part-way, the card says how far, how fast and how long is left.
    said = until(browser, lambda d: (lambda t: t if "/s" in t and "left" in t else None)(
        d.execute_script("const n = document.querySelector(arguments[0]); return n ? n.textContent : ''",
                         f'.receiving[data-offer="{received}"] .numbers')), "the receive's bytes, rate and time left")
    assert " of 2.0 MiB" in said, said
    until(browser, lambda d: css(d, f'.receiving[data-offer="{received}"][data-state="completed"]'), "the receive completed")
    status, out, err = finish(sending, timeout=GUARD)
    assert status == 0, out + err

    # Sending: uploaded from the page, accepted by alice, followed part-way, then done.
    tab(browser, "send")
    chosen = f'#send-peers input[value="{alice.fingerprint}"]'
    click(browser, chosen, "alice among the peers", done=lambda d: css(d, chosen + ":checked"))
    css(browser, "#send-files")[0].send_keys(str(big))
    press_send(browser)
    # The upload's own progress (XMLHttpRequest's upload.onprogress), judged by its final state:
    # the bar full at the file's size, and at least one progress report drawn on the way.
    uploaded = '#send-uploads li.upload[data-state="uploaded"]'
    until(browser, lambda d: css(d, uploaded), "the upload done")
    value, top, updates = browser.execute_script(
        "const r = document.querySelector(arguments[0]), p = r.querySelector('progress');"
        "return [p.value, p.max, Number(r.dataset.updates)]", uploaded)
    assert value == top == big.stat().st_size and updates >= 1, (value, top, updates)
    offer = alice.wait_offer(timeout=GUARD)
    tab(browser, "transfers")
    alice.run("accept", offer["id"], "--no-wait")
    until(browser, part_way(f'.transfer[data-transfer="{offer["id"]}"] progress'), "the send part-way")
    said = until(browser, lambda d: (lambda t: t if "/s" in t and "left" in t else None)(
        d.execute_script("const n = document.querySelector(arguments[0]); return n ? n.textContent : ''",
                         f'.transfer[data-transfer="{offer["id"]}"] .numbers')), "the send's bytes, rate and time left")
    assert " of 2.0 MiB" in said, said
    # The running transfer is the first card, above the ended ones.
    first = browser.execute_script("const c = document.querySelector('#transfers-list .card'); return c && c.dataset.transfer")
    assert first == offer["id"], first
    until(browser, lambda d: css(d, f'.transfer[data-transfer="{offer["id"]}"][data-state="done"]'), "the send done")


def test_the_gallery_pages_follows_the_cli_and_shows_heic(make_node, browser, workdir):
    """A gallery larger than a page (`?pageSize=5`): the page asks for one page at a time and the
    rest comes as the user scrolls; a favourite and a tag set with the CLI show without a reload;
    a HEIC photo opens full size (a JPEG made by the agent, since browsers show no HEIC)."""
    many = 60
    folder = workdir / "many"
    folder.mkdir()
    for i in range(many):
        # Distinct photos (the vault skips duplicates): bytes after the JPEG's end differ.
        (folder / f"p{i:02}.jpg").write_bytes(JPG.read_bytes() + i.to_bytes(4, "big"))
    (folder / "sample.heic").write_bytes(fixture("sample.heic").read_bytes())
    bob = make_node("b", start=False)
    port = w.start_web(bob)
    bob.run("import", str(folder))
    ids = [p["id"] for p in bob.photos()]
    assert len(ids) == many + 1
    heic = next(p["id"] for p in bob.photos() if p["name"] == "sample.heic")
    # Every photo indexed first: the indexer's photo.indexed events would reload the gallery
    # while this test counts pages.
    pending = set(ids)

    def all_indexed():
        for i in list(pending):
            if bob.run("show", i)["media"].get("width"):
                pending.discard(i)
        return not pending
    wait_for(all_indexed, timeout=GUARD, what="every photo indexed")

    browser.set_window_size(1280, 600)
    logged_in(browser, bob)
    browser.get(f"http://127.0.0.1:{port}/?pageSize=5")
    until(browser, lambda d: css(d, "#live.on"), "the page live again")
    tab(browser, "vault")
    # In one script: the gallery is redrawn as events arrive (no stale elements half-way).
    shown = lambda d: d.execute_script("return [...document.querySelectorAll('#gallery .thumb')].map((t) => t.dataset.photo)")
    settled = lambda d: d.execute_script(
        "const b = document.getElementById('gallery-more'); return !b.hidden && !b.disabled")
    # Pages come while the end is near the screen, then stop: not everything at once.
    until(browser, lambda d: len(shown(d)) >= 5 and settled(d), "the first pages")
    first = len(shown(browser))
    assert first < many + 1, first
    asked = browser.execute_script(
        "return performance.getEntriesByType('resource').map((e) => e.name).filter((n) => n.includes('/v1/photos?'))")
    limits = [int(dict(x.split("=", 1) for x in a.split("?", 1)[1].split("&"))["limit"]) for a in asked]
    assert set(limits) == {5} and len(limits) >= first // 5, limits

    # Scrolling brings the rest, each photo once.
    def scrolled_to_the_end(d):
        d.execute_script("window.scrollTo(0, document.body.scrollHeight)")
        return shown(d)
    until(browser, lambda d: len(scrolled_to_the_end(d)) == many + 1, "every photo after scrolling")
    assert sorted(shown(browser)) == sorted(ids)
    until(browser, lambda d: css(d, "#gallery-more")[0].get_attribute("hidden") is not None, "no more to load")

    # Changes made with the CLI show without a reload (the marker survives: same document).
    browser.execute_script("window.sameDocument = true")
    # On the first page, so back in view after the filter below; not the HEIC, opened last.
    target = next(i for i in shown(browser) if i != heic)
    assert not css(browser, f'#gallery .thumb[data-photo="{target}"] .fav')
    bob.run("favorite", target)
    until(browser, lambda d: css(d, f'#gallery .thumb[data-photo="{target}"] .fav'), "the favourite star")
    bob.run("tag", "--add", "sunset", target)
    choose(browser, "#filter-tag", "sunset")
    until(browser, lambda d: shown(d) == [target], "the gallery filtered by the new tag")
    choose(browser, "#filter-tag", "")
    until(browser, lambda d: len(shown(d)) >= 5 and settled(d), "the first pages again")
    bob.run("delete", "--yes", target)
    until(browser, lambda d: target not in shown(d) and len(shown(d)) >= 5, "the deleted photo gone")
    assert browser.execute_script("return window.sameDocument === true")

    # The HEIC full size: the agent's JPEG rendition, at the photo's own size.
    until(browser, lambda d: heic in scrolled_to_the_end(d), "the HEIC in the gallery")
    click(browser, f'#gallery .thumb[data-photo="{heic}"]', "the HEIC", done=lambda d: not css(d, "#viewer")[0].get_attribute("hidden"))
    until(browser, lambda d: d.execute_script(
        "const i = document.getElementById('viewer-image'); return i.complete && i.naturalWidth"), "the HEIC full size")
    assert browser.execute_script("return document.getElementById('viewer-image').naturalWidth") == bob.run("show", heic)["media"]["width"]
    assert css(browser, "#viewer-image")[0].get_attribute("src").endswith(f"/v1/photos/{heic}/display")
    assert css(browser, "#viewer-download")[0].get_attribute("href").endswith(f"/v1/photos/{heic}/original")
    assert css(browser, "#viewer-failed")[0].get_attribute("hidden") is not None


SHOTS = h.REPO / ".build" / "screenshots"


def overflow(driver) -> list[str]:
    """What sticks out of the window sideways: the page wider than it, or any shown element
    whose box passes its right edge (cut off by an overflow: hidden parent or not)."""
    return driver.execute_script("""
        const w = document.documentElement.clientWidth, out = [];
        if (document.documentElement.scrollWidth > w) out.push("the page is " + document.documentElement.scrollWidth + " px wide in " + w);
        for (const e of document.querySelectorAll("body *")) {
          const r = e.getBoundingClientRect();
          if (r.width === 0 || r.height === 0 || getComputedStyle(e).visibility === "hidden") continue;
          if (e.closest("[hidden]") || e.closest("#viewer[hidden]")) continue;
          if (r.right > w + 0.5 || r.left < -0.5) out.push((e.id ? "#" + e.id : e.tagName.toLowerCase() + "." + e.className) + " spans " + Math.round(r.left) + ".." + Math.round(r.right));
        }
        return out.slice(0, 10);""")


def test_every_view_fits_a_phone_and_a_desktop(make_node, browser, workdir):
    """Each view at 1280 px and at a phone's 390 px (Chromium's mobile emulation): nothing wider
    than the screen or cut off, the header compact; received photos listed again after a reload;
    the viewer covers the page and steps through the gallery with its details shown. The
    screenshots are kept in .build/screenshots for a person to look at."""
    alice = make_node("a")
    bob = make_node("b", start=False)
    w.start_web(bob, wait_discovery=True)
    alice.wait_sees(bob)
    bob.wait_sees(alice)
    bob.run("trust", alice.fp_prefix)
    photos = []
    media = h.REPO / "Tests" / "LocafotoMediaTests" / "Fixtures"  # photographs, 1200 × 800
    for i, name in enumerate(("photo.jpg", "thumb.jpg", "upright.jpg")):
        p = workdir / f"IMG_{i + 1:04d} a long name from a phone's camera roll.jpg"
        p.write_bytes((media / name).read_bytes())
        photos.append(str(p))
    sent = alice.run("send", bob.fp_prefix, *photos)
    assert sent["state"] == "done", sent
    wait_for(lambda: all(bob.run("show", p["id"])["media"].get("width") for p in bob.photos()), timeout=GUARD,
             what="the indexer to have read the photos")
    # A JPEG whose headers are damaged: the vault keeps it (it is sniffed as a JPEG), no
    # decoder can make a thumbnail of it.
    cut = workdir / "cut short.jpg"
    cut.write_bytes(b"\xff\xd8\xff\xe0" + bytes(range(256)) * 8)
    bob.run("import", str(cut))
    cut_id = next(p["id"] for p in bob.photos() if p["name"] == "cut short.jpg")
    logged_in(browser, bob)
    SHOTS.mkdir(parents=True, exist_ok=True)

    for width, height, mobile in ((1280, 900, False), (390, 844, True)):
        browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                {"width": width, "height": height, "deviceScaleFactor": 2 if mobile else 1, "mobile": mobile})
        # A reload: what was received is still listed (it came before this page existed).
        browser.refresh()
        until(browser, lambda d: css(d, "#live.on"), "the page live")
        for view in ("inbox", "transfers", "send", "peers", "vault"):
            tab(browser, view)
            if view == "transfers":
                until(browser, lambda d: css(d, '.receiving[data-state="completed"]'), "the received photos listed after a reload")
            if view == "peers":
                until(browser, lambda d: css(d, f'#peers-table tr[data-fingerprint="{alice.fingerprint}"]'), "alice in the peers")
            if view == "vault":
                until(browser, lambda d: len(css(d, "#gallery .thumb")) == 4, "the four photos in the gallery")
                # Each thumbnail drawn, or a placeholder with the name: never a broken image.
                until(browser, lambda d: d.execute_script(
                    "return [...document.querySelectorAll('#gallery .thumb img')]"
                    ".every((i) => i.complete && (getComputedStyle(i).display === 'none' || i.naturalWidth > 0))"),
                    "every thumbnail drawn or replaced by a placeholder")
                assert css(browser, f'#gallery .thumb.placeholder[data-photo="{cut_id}"]'), "no placeholder for the photo without a thumbnail"
                assert len(css(browser, "#gallery .thumb.placeholder")) == 1
            browser.save_screenshot(str(SHOTS / f"{view}-{width}.png"))
            assert overflow(browser) == [], f"{view} at {width} px: {overflow(browser)}"
            header = browser.execute_script("return document.querySelector('header').getBoundingClientRect().height")
            assert header <= height * 0.15, f"the header takes {header} px of {height} at {width} px"
            # Every tab is on the screen and clickable.
            for b in css(browser, "button.tab"):
                assert b.is_displayed() and b.rect["x"] + b.rect["width"] <= width + 0.5, (view, width, b.text, b.rect)

        # The viewer: covers the page (nothing of the header over its title), previous / next
        # in gallery order, details from the indexer.
        ids = [i for i in browser.execute_script("return [...document.querySelectorAll('#gallery .thumb')].map((t) => t.dataset.photo)")
               if i != cut_id]
        css(browser, f'#gallery .thumb[data-photo="{ids[1]}"]')[0].click()
        until(browser, lambda d: not d.execute_script("return document.getElementById('viewer').hidden"), "the viewer open")
        until(browser, lambda d: "Pixels" in css(d, "#viewer-details")[0].text, "the photo's details")
        top = browser.execute_script(
            "const t = document.getElementById('viewer-title').getBoundingClientRect();"
            "const e = document.elementFromPoint(t.left + 2, t.top + t.height / 2); return e && e.closest('#viewer') !== null")
        assert top, "something lies over the viewer's title"
        browser.save_screenshot(str(SHOTS / f"viewer-{width}.png"))
        assert overflow(browser) == [], f"the viewer at {width} px: {overflow(browser)}"
        title = lambda d: css(d, "#viewer-title")[0].text
        second = title(browser)
        css(browser, "#viewer-next")[0].click()
        until(browser, lambda d: title(d) != second, "the next photo")
        assert css(browser, "#viewer-next")[0].get_attribute("disabled") is not None, "the last photo has no next"
        css(browser, "#viewer-prev")[0].click()
        until(browser, lambda d: title(d) == second, "back to the photo before")
        css(browser, "#viewer-close")[0].click()


def test_localsend_switch_and_a_phones_offer_in_the_page(make_node, browser, workdir):
    """LocalSend (issue 27) from the page: the switch on the Peers view opens the port; a
    LocalSend device's offer shows as "LocalSend, not verified" and is accepted with its button;
    the device is then listed, with a Trust button. Screenshots at 1280 and 390 px."""
    from test_localsend import LocalSendD, free_port, result_of
    bob = make_node("b", start=False)
    port = free_port()
    w.start_web(bob, "--localsend-port", str(port), "--no-localsend-multicast")
    logged_in(browser, bob)
    tab(browser, "peers")
    until(browser, lambda d: "off" in css(d, "#localsend-state")[0].text, "LocalSend shown off")
    click(browser, "#localsend-on", "the LocalSend switch",
          done=lambda d: f"port {port}" in css(d, "#localsend-state")[0].text)
    assert bob.run("localsend")["enabled"] is True
    d = workdir / "lsd"
    d.mkdir()
    phone = LocalSendD(d, "Pixel of Ana")
    try:
        c = phone.send_async(port, h.REPO / "Tests" / "LocafotoMediaTests" / "Fixtures" / "photo.jpg")
        tab(browser, "inbox")
        text = until(browser, lambda d: "".join(e.text for e in css(d, ".offer")), "the LocalSend offer to appear")
        assert "Pixel of Ana" in text and "LocalSend, not verified" in text and phone.fingerprint in text, text
        click(browser, ".offer button.accept", "Accept")
        result = result_of(c)
        assert result["kind"] == "sent", result
    finally:
        phone.stop()
    assert [p["name"] for p in bob.photos()] == ["photo.jpg"]
    tab(browser, "peers")
    row = f'#localsend-table tr[data-fingerprint="{phone.fingerprint}"]'
    until(browser, lambda d: css(d, row), "the device listed")
    SHOTS.mkdir(parents=True, exist_ok=True)
    for width, height, mobile in ((1280, 900, False), (390, 844, True)):
        browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                {"width": width, "height": height, "deviceScaleFactor": 2 if mobile else 1, "mobile": mobile})
        until(browser, lambda d: css(d, row), "the device listed")
        browser.save_screenshot(str(SHOTS / f"localsend-{width}.png"))
        assert overflow(browser) == [], f"LocalSend at {width} px: {overflow(browser)}"
    click(browser, row + " button", "Trust", done=lambda d: css(d, row + " td.trusted"))
    assert bob.run("localsend")["devices"][0]["trust"] == "trusted"


def test_send_to_a_localsend_device_from_the_page_with_its_pin(make_node, browser, workdir):
    """Sending to a LocalSend device (issue 27) from the page: a device met before is listed
    among the recipients as "LocalSend, not verified"; choosing it shows the PIN field; a send
    without the PIN fails saying the device asks for one, and with it the photo lands in
    localsendd's downloads. Screenshots at 1280 and 390 px."""
    from test_localsend import LocalSendD, free_port, result_of
    bob = make_node("b", start=False)
    port = free_port()
    w.start_web(bob, "--localsend-port", str(port), "--no-localsend-multicast")
    bob.run("localsend", "on")
    d = workdir / "lsd"
    d.mkdir()
    phone = LocalSendD(d, "Pixel of Ana", "--unattended", "--pin", "1357")
    try:
        # Met first: it offered bob a photo, turned down; bob knows its certificate and port.
        c = phone.send_async(port, JPG)
        bob.run("reject", bob.wait_offer(previews=False)["id"][:8])
        result_of(c)
        logged_in(browser, bob)
        tab(browser, "send")
        choice = f'#send-peers input[value="localsend:{phone.fingerprint}"]'
        click(browser, choice, "the LocalSend device among the recipients", done=lambda d: css(d, choice + ":checked"))
        label = until(browser, lambda d: [e.text for e in css(d, "#send-peers label") if "Pixel of Ana" in e.text],
                      "the device's label")
        assert "LocalSend, not verified" in label[0], label
        until(browser, lambda d: css(d, "#send-pin-row")[0].is_displayed(), "the PIN field")
        css(browser, "#send-files")[0].send_keys(str(JPG))
        SHOTS.mkdir(parents=True, exist_ok=True)
        for width, height, mobile in ((1280, 900, False), (390, 844, True)):
            browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                    {"width": width, "height": height, "deviceScaleFactor": 2 if mobile else 1, "mobile": mobile})
            until(browser, lambda d: css(d, "#send-go:enabled"), "the Send button")
            browser.save_screenshot(str(SHOTS / f"localsend-send-{width}.png"))
            assert overflow(browser) == [], f"the send view at {width} px: {overflow(browser)}"
        press_send(browser)
        tab(browser, "transfers")
        # The text is read inside the wait: the list is drawn again on every event.
        failed = until(browser, lambda d: [e.text for e in css(d, '.transfer[data-state="failed"]')],
                       "the send that needs a PIN to fail")
        assert "asks for a PIN" in failed[0], failed
        tab(browser, "send")
        if not css(browser, choice + ":checked"):
            click(browser, choice, "the LocalSend device", done=lambda d: css(d, choice + ":checked"))
        css(browser, "#send-pin")[0].send_keys("1357")
        css(browser, "#send-files")[0].send_keys(str(JPG))
        press_send(browser)
        tab(browser, "transfers")
        until(browser, lambda d: css(d, '.transfer[data-state="done"]'), "the send with the PIN to be done")
        assert css(browser, "#send-pin")[0].get_attribute("value") == ""
    finally:
        phone.stop()
    assert (d / "downloads" / "sample.jpg").read_bytes() == JPG.read_bytes()
