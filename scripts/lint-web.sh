#!/usr/bin/env bash
# lint-web.sh - check the web app's files (Sources/LocafotoWeb/Assets), which the binary embeds:
#   app.js, login.js  ESLint (Debian's), eslint:recommended and scripts/eslintrc.json's rules
#                      (ES modules, so strict and no page globals; no eval; === only; no
#                      use of the page's own `event`, `name`, `status`, `length` globals);
#   *.html            HTML Tidy: any warning or error fails (so does an inline script: the CSP
#                      allows none; Tests/LocafotoWebTests checks that too);
#   app.css           tinycss2: every rule and declaration parses.
# Run by scripts/test.sh; installs nothing (scripts/setup.sh does).
set -euo pipefail
cd "$(dirname "$0")/.."
assets=Sources/LocafotoWeb/Assets

# Debian's eslint keeps its modules in /usr/share/nodejs, which Debian's node searches and a
# node from elsewhere (this machine's is NodeSource's) does not.
NODE_PATH="/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}" eslint --no-eslintrc -c scripts/eslintrc.json --max-warnings 0 "$assets"/*.js

for page in "$assets"/*.html; do
    # -e: only warnings and errors. One is expected and let through: the viewer's <img>, whose
    # src the app sets when a photo is shown (a placeholder src would be a request, or one the
    # CSP refuses); it must say so on its line (id="viewer-image").
    out=$(tidy -q -e --drop-empty-elements no --mute-id yes "$page" 2>&1 || true)
    left=$(printf '%s\n' "$out" | while IFS= read -r msg; do
        [ -n "$msg" ] || continue
        n=$(printf '%s' "$msg" | sed -n 's/^line \([0-9]*\) .*/\1/p')
        if [[ "$msg" == *'<img> lacks "src" attribute'* ]] && [ -n "$n" ] && sed -n "${n}p" "$page" | grep -q 'id="viewer-image"'; then
            continue
        fi
        printf '%s\n' "$msg"
    done)
    if [ -n "$left" ]; then
        echo "$left" >&2
        echo "lint-web: $page: HTML Tidy reports the above" >&2
        exit 1
    fi
    if grep -q '<script>' "$page"; then
        echo "lint-web: $page: an inline script (the CSP allows only /assets/ files)" >&2
        exit 1
    fi
done

python3 - "$assets"/*.css <<'PY'
import sys, tinycss2
bad = 0
for path in sys.argv[1:]:
    rules = tinycss2.parse_stylesheet(open(path, encoding="utf-8").read(), skip_comments=True, skip_whitespace=True)
    def check(nodes, where):
        global bad
        for node in nodes:
            if node.type == "error":
                print(f"{path}:{node.source_line}:{node.source_column}: {node.message} ({where})", file=sys.stderr)
                bad += 1
            elif node.type == "qualified-rule":
                decls = tinycss2.parse_declaration_list(node.content, skip_comments=True, skip_whitespace=True)
                check(decls, tinycss2.serialize(node.prelude).strip())
            elif node.type == "at-rule" and node.content is not None:
                if node.at_keyword in ("media", "supports"):
                    check(tinycss2.parse_rule_list(node.content, skip_comments=True, skip_whitespace=True), "@" + node.at_keyword)
                else:
                    check(tinycss2.parse_declaration_list(node.content, skip_comments=True, skip_whitespace=True), "@" + node.at_keyword)
            elif node.type == "declaration" and not node.value:
                print(f"{path}:{node.source_line}: {node.name} has no value ({where})", file=sys.stderr)
                bad += 1
    check(rules, "top level")
sys.exit(1 if bad else 0)
PY
echo "lint-web: $(ls "$assets" | wc -l) files clean"
