extension WebAssets {
    static let appCSS = ##"""
        :root { --fg: #1d2327; --muted: #646970; --line: #dcdcde; --accent: #2271b1; --bad: #b32d2e; --good: #007017; font-family: system-ui, sans-serif; color: var(--fg); }
        body { margin: 0; }
        body.plain { max-width: 40em; margin: 3em auto; line-height: 1.5; }
        header { display: flex; flex-wrap: wrap; align-items: center; gap: .8em; padding: .5em 1em; border-bottom: 1px solid var(--line); }
        header h1 { font-size: 1.2em; margin: 0; }
        nav { display: flex; flex-wrap: wrap; gap: .3em; flex: 1; }
        button, .button { font: inherit; padding: .3em .8em; border: 1px solid var(--line); border-radius: 4px; background: #f6f7f7; cursor: pointer; }
        button.tab.current { background: var(--accent); color: #fff; border-color: var(--accent); }
        button.primary { background: var(--accent); color: #fff; border-color: var(--accent); }
        button.danger { color: var(--bad); }
        button.quiet { background: none; }
        button:disabled { opacity: .5; cursor: default; }
        .badge { font-size: .8em; padding: .1em .5em; border-radius: 1em; background: #f0f0f1; color: var(--muted); }
        .badge.on { background: #edfaef; color: var(--good); }
        .badge.off { background: #fcf0f1; color: var(--bad); }
        #notice { padding: .5em 1em; background: #fcf9e8; border-bottom: 1px solid #dba617; }
        main { padding: 0 1em 2em; }
        .empty, .hint, .status { color: var(--muted); }
        .card { border: 1px solid var(--line); border-radius: 6px; padding: .8em; margin: .6em 0; }
        .card h3 { margin: 0 0 .3em; font-size: 1em; }
        .fp { font-family: ui-monospace, monospace; font-size: .85em; color: var(--muted); overflow-wrap: anywhere; }
        .trusted { color: var(--good); }
        .untrusted { color: var(--bad); }
        .items { display: flex; flex-wrap: wrap; gap: .5em; margin: .5em 0; }
        .item { width: 8em; font-size: .8em; overflow-wrap: anywhere; }
        .item img { display: block; max-width: 8em; max-height: 8em; }
        .preview-coming { width: 8em; height: 6em; background: repeating-linear-gradient(45deg, #e8e8e8 0 8px, #f4f4f4 8px 16px); }
        .actions { display: flex; gap: .5em; align-items: center; }
        progress { width: 100%; }
        table { border-collapse: collapse; width: 100%; }
        th, td { text-align: left; padding: .3em .5em; border-bottom: 1px solid var(--line); }
        .code { font-family: ui-monospace, monospace; font-size: 1.2em; letter-spacing: .1em; }
        .drop { border: 2px dashed var(--line); border-radius: 6px; padding: 1em; margin: 1em 0; }
        .drop.over { border-color: var(--accent); background: #f0f6fc; }
        .drop input[type=file] { display: none; }
        fieldset { border: 1px solid var(--line); border-radius: 6px; }
        .filters { display: flex; flex-wrap: wrap; gap: 1em; align-items: center; margin: 1em 0; }
        #gallery { display: grid; grid-template-columns: repeat(auto-fill, minmax(160px, 1fr)); gap: .5em; }
        .thumb { position: relative; aspect-ratio: 1; background: #f0f0f1; border: 0; padding: 0; overflow: hidden; }
        .thumb img { width: 100%; height: 100%; object-fit: cover; display: block; }
        .thumb .fav { position: absolute; top: .2em; right: .3em; color: #dba617; font-size: 1.3em; }
        .thumb .name { position: absolute; bottom: 0; left: 0; right: 0; font-size: .7em; background: rgba(255,255,255,.8); }
        /* Opaque: nothing of the page shows through its bar. */
        #viewer { position: fixed; inset: 0; background: #111; color: #fff; display: flex; flex-direction: column; align-items: center; z-index: 10; overflow-y: auto; }
        #viewer[hidden] { display: none; }
        .viewer-bar { display: flex; flex-wrap: wrap; gap: .5em 1em; align-items: center; padding: .5em; box-sizing: border-box; width: 100%; justify-content: flex-end; }
        #viewer-title { flex: 1; min-width: 10em; overflow-wrap: anywhere; }
        .viewer-stage { display: flex; align-items: center; gap: .5em; max-width: 100%; }
        .viewer-stage button { flex: none; font-size: 1.5em; padding: .2em .5em; background: #333; color: #fff; border-color: #555; }
        #viewer-image { max-width: calc(100vw - 8em); max-height: 78vh; object-fit: contain; }
        #viewer-details { display: grid; grid-template-columns: auto 1fr; gap: .2em 1em; margin: .5em 1em 1em; font-size: .9em; max-width: 40em; }
        #viewer-details dt { color: #aaa; }
        #viewer-details dd { margin: 0; overflow-wrap: anywhere; }
        .thumb img[hidden] { display: none; }
        .thumb.placeholder { background: repeating-linear-gradient(45deg, #ececec 0 8px, #f6f6f6 8px 16px); }
        .thumb.placeholder::before { content: "no preview"; position: absolute; inset: 0; display: flex; align-items: center; justify-content: center; font-size: .75em; color: var(--muted); }
        .live { border-color: var(--accent); box-shadow: 0 0 0 1px var(--accent); }
        .numbers { font-variant-numeric: tabular-nums; font-size: .9em; color: var(--muted); }
        #gallery-more { display: block; margin: 1em auto; }
        #gallery-more[hidden] { display: none; }
        #send-uploads { list-style: none; padding: 0; }
        .upload { display: grid; grid-template-columns: minmax(8em, 20em) 1fr minmax(8em, 14em); gap: .5em; align-items: center; font-size: .9em; }
        .upload[data-state=failed] .status { color: var(--bad); }
        #viewer-download { color: var(--fg); text-decoration: none; }
        #viewer-failed { color: #fff; }
        pre, code { background: #f6f7f7; padding: .1em .3em; border-radius: 3px; }
        /* A phone's width (390 px): a compact header whose tabs share one row, the peers as
           cards instead of a six-column table; nothing wider than the screen. */
        @media (max-width: 640px) {
          header { gap: .3em .6em; padding: .3em .5em; }
          header h1 { font-size: 1em; }
          #node { display: none; }
          nav { order: 3; flex-basis: 100%; flex-wrap: nowrap; }
          nav button.tab { flex: 1 1 0; min-width: 0; padding: .3em .1em; font-size: .85em; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
          main { padding: 0 .5em 2em; }
          h2 { font-size: 1.15em; }
          #peers-table thead { display: none; }
          #peers-table tr { display: block; border-bottom: 1px solid var(--line); padding: .4em 0; }
          #peers-table td { display: block; border: 0; padding: .1em 0; }
          .upload { grid-template-columns: 1fr; }
          #gallery { grid-template-columns: repeat(auto-fill, minmax(110px, 1fr)); }
          #viewer-image { max-width: calc(100vw - 1em); }
          .viewer-stage { flex-wrap: wrap; justify-content: center; }
          .viewer-stage button { order: 2; }
        }
        """##
}
