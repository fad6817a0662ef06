#!/usr/bin/env bash
# The course-cluster check of a bundle built by `cargo xtask bundle`: copy it to a fresh
# directory with no source tree beside it and run every test binary there, ROUNDS times (each
# round with fresh seeds, since the tests draw them at run time).
#   scripts/bundle-check.sh BUNDLE OUT [ROUNDS]
# Writes OUT/round-N/ (one log per test binary) and OUT/summary.md, printed last.
set -u
bundle=$(cd "$1" && pwd); out=$2; rounds=${3:-3}
mkdir -p "$out"; out=$(cd "$out" && pwd)
summary=$out/summary.md
: > "$summary"
status=0
for r in $(seq "$rounds"); do
  fresh=$(mktemp -d /tmp/bundle-check.XXXXXX)
  cp -r "$bundle" "$fresh/bundle"
  echo "## round $r ($fresh/bundle, $(date -u +%H:%M:%S))" >> "$summary"
  (cd "$fresh" && LOG_DIR="$out/round-$r" ./bundle/run.sh tests > "$out/round-$r.log" 2>&1)
  rc=$?
  [ "$rc" -eq 0 ] || status=1
  for log in "$out/round-$r"/*.log; do
    echo "- $(basename "$log" .log): $(grep -E '^test result' "$log" | tail -1)" >> "$summary"
  done
  echo "- run.sh exit $rc: $(tail -1 "$out/round-$r.log")" >> "$summary"
  rm -rf "$fresh"
done
cat "$summary"
exit "$status"
