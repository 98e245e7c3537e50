#!/usr/bin/env python3
"""bench-catalog.py - fill a vault catalog with N photos and time the SQL of PhotoQuery.

    python3 scripts/bench-catalog.py [--fill-only] CATALOG [COUNT] [RUNS]

Since v4-sealed the vault keeps nothing descriptive in these clear columns: the rows this
script inserts (with `sealed` NULL) are what a catalog of the previous version holds, and the
vault seals them at its first unlock. scripts/bench-catalog.sh fills with `--fill-only` and
then times the sealed catalog through the vault itself (locafoto-catalog-bench). Without
`--fill-only` the script still times the SQL below on the clear columns, which after v4-sealed
have lost their indexes: useful only against a catalog built before v4-sealed.

CATALOG is the `catalog.sqlite` of a vault made by `locafoto vault init` (so the schema is the
one the migrations build: v1, v2-keys, v2-organisation). Rows are inserted directly (no LOCA
files: only the catalog is measured). ANALYZE is not run, because the vault never runs it: the
plans are the ones the app gets.

`photo_query_sql` mirrors `PhotoQuery.compile` (Sources/LocafotoVault/PhotoQuery.swift) and
produces the same statements byte for byte, e.g. the default listing:

    SELECT photo.* FROM photo WHERE photo.isHidden = 0 AND +photo.privateAlbumId IS NULL
    ORDER BY COALESCE(photo.captureDate, photo.importDate) DESC, photo.id DESC LIMIT ?

Each query runs once to warm the cache, then RUNS times; the median and the worst run are
printed in milliseconds with the EXPLAIN QUERY PLAN. Not a test: it prints, asserts nothing,
except that no sort of the unfiltered listing needs a temporary b-tree.
"""
import datetime
import json
import os
import random
import sqlite3
import statistics
import sys
import time
import uuid

EFFECTIVE = "COALESCE(photo.captureDate, photo.importDate)"
SORT_SQL = {
    "captureDate": EFFECTIVE,
    "importDate": "photo.importDate",
    "size": "photo.originalSize",
    "name": "photo.name COLLATE NOCASE",
}


def contains_pattern(text):
    out = "".join("\\" + c if c in "\\%_" else c for c in text)
    return "%" + out + "%"


def photo_query_sql(sort="captureDate", order="descending", album_id=None, tag=None, favorite=None,
                    hidden="exclude", date_from=None, before=None, fmt=None, sender=None, text=None,
                    limit=None, offset=0, unlocked=()):
    """The (sql, arguments) PhotoQuery.compile emits (album given by ID, already resolved)."""
    terms, args = [], []
    if hidden == "exclude":
        terms.append("photo.isHidden = 0")
    elif hidden == "only":
        terms.append("photo.isHidden = 1")
    if unlocked:
        terms.append("(+photo.privateAlbumId IS NULL OR +photo.privateAlbumId IN (%s))"
                     % ", ".join("?" * len(unlocked)))
        args += list(unlocked)
    else:
        terms.append("+photo.privateAlbumId IS NULL")
    if album_id is not None:
        terms.append("photo.id IN (SELECT photoId FROM albumPhoto WHERE albumId = ?)")
        args.append(album_id)
    if tag is not None:
        terms.append("photo.id IN (SELECT photoId FROM photoTag WHERE tag = ?)")
        args.append(tag)
    if favorite is not None:
        terms.append("photo.isFavorite = 1" if favorite else "photo.isFavorite = 0")
    if date_from is not None:
        terms.append(EFFECTIVE + " >= ?")
        args.append(date_from)
    if before is not None:
        terms.append(EFFECTIVE + " < ?")
        args.append(before)
    if fmt is not None:
        terms.append("photo.format = ?")
        args.append(fmt)
    if sender is not None:
        terms.append("photo.senderFingerprint = ?")
        args.append(sender)
    if text:
        terms.append("(photo.name LIKE ? ESCAPE '\\' OR photo.id IN "
                     "(SELECT photoId FROM photoTag WHERE tag LIKE ? ESCAPE '\\'))")
        args += [contains_pattern(text), contains_pattern(text.lower())]
    direction = "ASC" if order == "ascending" else "DESC"
    limit_clause = ""
    if limit is not None:
        limit_clause = " LIMIT ?"
        args_tail = [limit]
    else:
        args_tail = []
    if offset > 0:
        if limit is None:
            limit_clause = " LIMIT -1"
        limit_clause += " OFFSET ?"
        args_tail.append(offset)
    where = " AND ".join(terms)
    select = ("SELECT photo.* FROM photo WHERE %s ORDER BY %s %s, photo.id %s%s"
              % (where, SORT_SQL[sort], direction, direction, limit_clause))
    count = "SELECT COUNT(*) FROM photo WHERE " + where
    return select, args + args_tail, count, args


def ts(dt):
    """GRDB's DATETIME text: UTC, millisecond precision."""
    return dt.strftime("%Y-%m-%d %H:%M:%S.") + "%03d" % (dt.microsecond // 1000)


def fill(db, count, rng):
    formats = ["jpeg"] * 70 + ["heic"] * 18 + ["png"] * 8 + ["webp", "gif", "tiff", "avif"]
    senders = [None] * 6 + ["ABCDE-FGHIJ-%05d" % i for i in range(8)]
    tags = ["family", "holiday", "beach", "work", "cat", "dog", "food", "city", "night", "snow",
            "birthday", "concert", "garden", "sunset", "friends", "paris", "été", "receipts",
            "screenshots", "rare-tag"]
    weights = [30, 20, 12, 10, 9, 8, 8, 7, 6, 5, 4, 3, 3, 3, 3, 2, 2, 1, 1, 0.05]
    start = datetime.datetime(2015, 1, 1)
    now = datetime.datetime(2025, 11, 1)
    span = (now - start).total_seconds()
    photos, photo_tags = [], []
    for i in range(count):
        pid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        imported = start + datetime.timedelta(seconds=rng.random() * span)
        captured = None if rng.random() < 0.25 else imported - datetime.timedelta(days=rng.random() * 400)
        size = int(rng.lognormvariate(14.5, 0.6))
        name = None if rng.random() < 0.05 else rng.choice(["IMG_%04d.JPG", "DSC%05d.jpg", "photo %d.heic",
                                                             "Screenshot %d.png", "100%%_real_%d.jpg"]) % i
        photos.append((
            pid, name, rng.choice(formats), size, size + 80, rng.randbytes(32),
            ts(captured) if captured else None, ts(imported), ts(imported), 4032, 3024,
            int(rng.random() < 0.05), int(rng.random() < 0.02), rng.choice(senders), None,
            rng.randbytes(72), 1, "photos/%s/%s.loca" % (pid[:2], pid)))
        for t in set(rng.choices(tags, weights, k=rng.choice([0, 0, 1, 1, 2, 3]))):
            photo_tags.append((pid, t))
    t0 = time.perf_counter()
    with db:
        db.executemany(
            "INSERT INTO photo (id, name, format, originalSize, encryptedSize, contentHash, captureDate,"
            " importDate, modifiedDate, width, height, isFavorite, isHidden, senderFingerprint, senderName,"
            " wrappedKey, algorithm, filePath) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            photos)
        db.executemany("INSERT INTO photoTag (photoId, tag) VALUES (?, ?)", photo_tags)
    insert_s = time.perf_counter() - t0
    ids = [p[0] for p in photos]
    albums = {}
    with db:
        for name, members in [("Everything 2019", 10000), ("Trip", 1000), ("Small", 50)]:
            aid = str(uuid.uuid4())
            albums[name] = aid
            db.execute("INSERT INTO album (id, name, nameKey, createdDate) VALUES (?, ?, ?, ?)",
                       (aid, name, name.lower(), ts(now)))
            db.executemany("INSERT INTO albumPhoto (albumId, photoId, addedDate) VALUES (?, ?, ?)",
                           [(aid, p, ts(now)) for p in rng.sample(ids, members)])
    return albums, insert_s, len(photo_tags)


def measure(db, sql, args, runs):
    db.execute(sql, args).fetchall()
    times = []
    rows = 0
    for _ in range(runs):
        t0 = time.perf_counter()
        rows = len(db.execute(sql, args).fetchall())
        times.append((time.perf_counter() - t0) * 1000)
    plan = " | ".join(r[3] for r in db.execute("EXPLAIN QUERY PLAN " + sql, args))
    return statistics.median(times), max(times), rows, plan


def main():
    fill_only = "--fill-only" in sys.argv
    argv = [a for a in sys.argv if a != "--fill-only"]
    path = argv[1]
    count = int(argv[2]) if len(argv) > 2 else 100_000
    runs = int(argv[3]) if len(argv) > 3 else 20
    rng = random.Random(20251121)
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode = WAL")
    migrations = [r[0] for r in db.execute("SELECT identifier FROM grdb_migrations")]
    assert "v2-organisation" in migrations, "catalog without the v2-organisation migration: rebuild locafoto"
    albums, insert_s, n_tags = fill(db, count, rng)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    print("== %d photos, %d tags, 3 albums inserted in %.1f s (%.0f rows/s with every index)"
          % (count, n_tags, insert_s, count / insert_s))
    print("== catalog: %.1f MiB" % (os.path.getsize(path) / 1048576))
    if fill_only:
        return

    page = 100
    cases = []
    for sort in ["captureDate", "importDate", "size", "name"]:
        for order in ["descending", "ascending"]:
            cases.append(("sort %s %s" % (sort, order), dict(sort=sort, order=order, limit=page), True))
    cases += [
        ("sort importDate, hidden included", dict(sort="importDate", hidden="include", limit=page), True),
        ("sort size asc, hidden included", dict(sort="size", order="ascending", hidden="include", limit=page), True),
        ("hidden only", dict(hidden="only", limit=page), True),
        ("deep page (offset 50,000)", dict(limit=page, offset=50_000), True),
        ("last page (offset 99,900)", dict(limit=page, offset=max(0, count - 100)), True),
        ("album of 10,000", dict(album_id=albums["Everything 2019"], limit=page), False),
        ("album of 50", dict(album_id=albums["Small"], limit=page), False),
        ("tag 'family' (~17%)", dict(tag="family", limit=page), False),
        ("tag 'rare-tag' (~0.03%)", dict(tag="rare-tag", limit=page), False),
        ("favourites (5%)", dict(favorite=True, limit=page), False),
        ("favourites by size", dict(sort="size", favorite=True, limit=page), False),
        ("date range: one month", dict(date_from="2020-03-01 00:00:00.000", before="2020-04-01 00:00:00.000",
                                       limit=page), False),
        ("format png (8%)", dict(fmt="png", limit=page), False),
        ("format avif (~1%)", dict(fmt="avif", limit=page), False),
        ("sender", dict(sender="ABCDE-FGHIJ-00003", limit=page), False),
        ("text 'IMG_12' (name)", dict(text="IMG_12", limit=page), False),
        ("text '100%_' (escaped)", dict(text="100%_", limit=page), False),
        ("text 'sunse' (tag)", dict(text="sunse", limit=page), False),
        ("album + tag + favourite", dict(album_id=albums["Everything 2019"], tag="family", favorite=True,
                                         limit=page), False),
        ("private album unlocked", dict(limit=page, unlocked=("00000000-0000-4000-8000-000000000000",)), True),
    ]
    print("%-36s %9s %9s %6s  %s" % ("query (first page of 100)", "median ms", "max ms", "rows", "plan"))
    bad = []
    for label, kw, must_use_index in cases:
        sql, args, count_sql, count_args = photo_query_sql(**kw)
        med, worst, rows, plan = measure(db, sql, args, runs)
        print("%-36s %9.2f %9.2f %6d  %s" % (label, med, worst, rows, plan))
        if must_use_index and "TEMP B-TREE" in plan:
            bad.append(label)
    sql, args, count_sql, count_args = photo_query_sql()
    med, worst, rows, plan = measure(db, count_sql, count_args, runs)
    print("%-36s %9.2f %9.2f %6d  %s" % ("count (default filter)", med, worst, rows, plan))
    sql, args, count_sql, count_args = photo_query_sql(tag="family")
    med, worst, rows, plan = measure(db, count_sql, count_args, runs)
    print("%-36s %9.2f %9.2f %6d  %s" % ("count (tag 'family')", med, worst, rows, plan))
    if bad:
        print("!! temporary b-tree for: " + ", ".join(bad))
        sys.exit(1)


if __name__ == "__main__":
    main()
