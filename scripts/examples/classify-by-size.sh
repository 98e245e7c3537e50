#!/bin/sh
# Example classify hook for `locafoto agent --classify-hook scripts/examples/classify-by-size.sh`.
# The photo arrives on standard input (never as a file). Exit 0 to import it, printing
# `tag:NAME` lines to tag it; exit non-zero to refuse it, with the reason on the first stderr line.
# This one refuses tiny images (thumbnails, icons) and tags big ones.
size=$(wc -c | tr -d ' ')
if [ "$size" -lt 1024 ]; then
    echo "only $size bytes: too small to be a photo" >&2
    exit 1
fi
if [ "$size" -gt 5000000 ]; then
    echo "tag:large"
fi
echo "tag:classified"
exit 0
