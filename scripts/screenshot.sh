#!/usr/bin/env bash
# Runs the real desktop app under Xvfb on the demo workspace and writes a PNG
# of each screen (captured with xwd, as a GL window's own capture is black
# under Xvfb) to docs/screenshots/.
#   usage: scripts/screenshot.sh BINARY WORKSPACE OUTDIR SCREEN...
set -euo pipefail
bin=$1 ws=$2 out=$3
shift 3
mkdir -p "$out"
display=:$(( 90 + RANDOM % 100 ))
Xvfb "$display" -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 &
xvfb=$!
trap 'kill $xvfb 2>/dev/null || true' EXIT
export DISPLAY=$display
for _ in $(seq 50); do xwininfo -root >/dev/null 2>&1 && break; sleep 0.1; done
for screen in "$@"; do
  "$bin" --workspace "$ws" --screen "$screen" >/dev/null 2>&1 &
  app=$!
  for _ in $(seq 100); do
    xwininfo -root -tree 2>/dev/null | grep -q '"Clinsight' && break
    sleep 0.2
  done
  sleep 4 # let the screen load its data and draw
  # A frame not drawn yet is all black (a PNG of a few hundred bytes):
  # wait and capture again.
  for _ in 1 2 3 4 5; do
    xwd -root -silent | xwdtopnm 2>/dev/null | pnmtopng > "$out/$screen.png"
    [ "$(stat -c %s "$out/$screen.png")" -gt 4096 ] && break
    sleep 2
  done
  kill "$app" 2>/dev/null || true
  wait "$app" 2>/dev/null || true
  echo "wrote $out/$screen.png"
done
