#!/usr/bin/env bash
# Measures `clinsight sql --xlsx` against a plain excelize StreamWriter
# program (scripts/exportbench) writing the same rows of the same SQLite
# table, in the same run (issue 21 item 2): peak RSS (/usr/bin/time -v),
# wall time and rows/s of each, ROUNDS times in turn, with the load average
# before and after. The table has ROWS rows × 10 columns (integers, reals,
# short text, date-times); it is made once and kept in $EXPORTBENCH_DIR.
#   usage: scripts/exportbench.sh [BINARY]   (default: builds ./ with -tags ci)
#   ROWS=1000000 ROUNDS=3 scripts/exportbench.sh
# Acceptance: peak RSS ≤ 300 MB and rows/s ≥ 0.8 × the reference's.
set -euo pipefail
rows=${ROWS:-1000000}
rounds=${ROUNDS:-3}
dir=${EXPORTBENCH_DIR:-${TMPDIR:-/tmp}/clinsight-exportbench}
mkdir -p "$dir"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bin=${1:-}
if [ -z "$bin" ]; then
  bin="$tmp/clinsight"
  CGO_ENABLED=0 go build -tags ci -o "$bin" .
fi
CGO_ENABLED=0 go build -o "$tmp/reference" ./scripts/exportbench
db="$dir/t$rows.sqlite"
if [ ! -s "$db" ]; then
  echo "making $db ($rows rows × 10 columns)…" >&2
  "$tmp/reference" gen "$db.part" "$rows"
  mv "$db.part" "$db"
fi
export CLINSIGHT_WORKSPACE="$tmp/ws" OLLAMA_HOST=127.0.0.1:1

# run LABEL CMD...: runs CMD under /usr/bin/time -v and prints one line:
# peak RSS (MiB), wall seconds, rows/s, processor seconds (user + system,
# which a loaded machine changes less than the wall time) and rows per
# processor second.
run() {
  local label=$1
  shift
  /usr/bin/time -v -o "$tmp/time" "$@" >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
  awk -v label="$label" -v rows="$rows" '
    /Maximum resident set size/ {rss = $NF / 1024}
    /Elapsed \(wall clock\)/ {n = split($NF, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]}
    /User time \(seconds\)/ {cpu += $NF}
    /System time \(seconds\)/ {cpu += $NF}
    END {printf "%-22s peak RSS %7.1f MiB  %7.2f s  %8.0f rows/s  cpu %7.2f s  %8.0f rows/cpu-s\n", label, rss, s, rows / s, cpu, rows / cpu}' "$tmp/time"
}

"$bin" sql --db "$db" "SELECT count(*) FROM t" >/dev/null 2>&1 # the workspace, the page cache
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)  ($(nproc) cores)"
echo "rows: $rows × 10 columns; $rounds rounds, in turn"
for i in $(seq "$rounds"); do
  rm -f "$tmp/ref.xlsx" "$tmp/out.xlsx"
  run "reference (excelize)" "$tmp/reference" write "$db" "$tmp/ref.xlsx" | tee -a "$tmp/ref.txt"
  run "clinsight sql --xlsx" "$bin" sql --db "$db" --max-rows "$rows" --timeout 10m --patient-level \
    --xlsx "$tmp/out.xlsx" "SELECT * FROM t" | tee -a "$tmp/cli.txt"
done
echo "load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"
echo "file sizes: reference $(stat -c %s "$tmp/ref.xlsx") bytes, clinsight $(stat -c %s "$tmp/out.xlsx") bytes"
# Medians over the rounds, and the ratio of throughputs.
med() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
field() { awk -v f="$1" '{for (i = 2; i <= NF; i++) if ($i == f) print $(i - 1)}'; }
ref_rps=$(field rows/s <"$tmp/ref.txt" | med)
cli_rps=$(field rows/s <"$tmp/cli.txt" | med)
ref_cps=$(field rows/cpu-s <"$tmp/ref.txt" | med)
cli_cps=$(field rows/cpu-s <"$tmp/cli.txt" | med)
rss() { awk '{for (i = 1; i < NF; i++) if ($i == "RSS") print $(i + 1)}'; }
ref_rss=$(rss <"$tmp/ref.txt" | med)
cli_rss=$(rss <"$tmp/cli.txt" | med)
awk -v a="$cli_rps" -v b="$ref_rps" -v ra="$cli_rss" -v rb="$ref_rss" -v ca="$cli_cps" -v cb="$ref_cps" 'BEGIN {
  printf "median: clinsight %.0f rows/s (%.0f per cpu-s), %.1f MiB; reference %.0f rows/s (%.0f per cpu-s), %.1f MiB\n", a, ca, ra, b, cb, rb
  printf "throughput ratio %.2f wall, %.2f processor time (goal ≥ 0.8); clinsight peak RSS %.1f MB (goal ≤ 300 MB)\n", a / b, ca / cb, ra * 1.048576 }'
