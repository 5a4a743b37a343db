#!/usr/bin/env bash
# Times the start of CLI subcommands: each command runs RUNS times (default
# 30) and the median, min and max wall times are printed in milliseconds,
# with the same figures for a hello-world Go binary as the reference of the
# same run and the load average before and after. Package initialisation
# costs are listed with GODEBUG=inittrace=1 (the ten largest by allocated
# bytes, which unlike their times do not depend on the machine's load).
# Several binaries (e.g. before and after a change) are timed in the same
# run, in turn (round-robin, so that a change of the machine's load hits
# all alike). `tables` lists the sources of CLINSIGHT_WORKSPACE when it is
# set (e.g. a workspace after 'clinsight demo init'), of an empty one
# otherwise.
#   usage: scripts/clistart.sh [BINARY...]   (default: builds ./ with -tags ci)
#   RUNS=50 scripts/clistart.sh /tmp/clinsight-before /tmp/clinsight
set -euo pipefail
[ -n "${EPOCHREALTIME:-}" ] || { echo "clistart.sh needs bash 5 (EPOCHREALTIME)" >&2; exit 1; }
runs=${RUNS:-30}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bins=("$@")
if [ ${#bins[@]} -eq 0 ]; then
  bins=("$tmp/clinsight")
  CGO_ENABLED=0 go build -tags ci -o "${bins[0]}" .
fi
mkdir -p "$tmp/hello"
cat > "$tmp/hello/main.go" <<'EOF'
package main

import "fmt"

func main() { fmt.Println("hello") }
EOF
(cd "$tmp/hello" && CGO_ENABLED=0 GOFLAGS= GO111MODULE=off go build -o "$tmp/hello-bin" main.go)

# Two more references, built in this module (its go.mod pins the versions):
# "libraries alone" links every package Clinsight's own packages import in
# the build with FLOOR_TAGS (default nogui, the command-line build), and
# does nothing: the start cost that is not Clinsight's code (their package
# initialisation, the runtime's start in a binary of that size). "cobra +
# SQLite tables" is the least a `tables` command needs: a cobra command
# that opens a SQLite file and lists its tables.
mkdir -p "$tmp/libs" "$tmp/sqlite"
{
  echo 'package main'
  echo 'import ('
  go list -tags "${FLOOR_TAGS:-nogui}" -f '{{join .Imports "\n"}}' \
    $(go list -tags "${FLOOR_TAGS:-nogui}" -deps . | grep '^github.com/clinsight/') |
    grep -v '^github.com/clinsight/' | sort -u | sed 's/.*/\t_ "&"/'
  echo ')'
  echo 'func main() {}'
} >"$tmp/libs/main.go"
cat >"$tmp/sqlite/main.go" <<'GO'
package main

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	_ "modernc.org/sqlite"
)

func main() {
	root := &cobra.Command{Use: "tables", SilenceUsage: true, RunE: func(*cobra.Command, []string) error {
		db, err := sql.Open("sqlite", "file:"+filepath.Join(os.Getenv("FLOOR_DIR"), "floor.sqlite")+"?mode=rwc")
		if err != nil {
			return err
		}
		defer db.Close()
		rows, err := db.Query("SELECT name FROM sqlite_master WHERE type = 'table'")
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var name string
			if err := rows.Scan(&name); err != nil {
				return err
			}
			fmt.Println(name)
		}
		return rows.Err()
	}}
	if root.Execute() != nil {
		os.Exit(1)
	}
}
GO
CGO_ENABLED=0 go build -o "$tmp/libs-bin" "$tmp/libs/main.go"
CGO_ENABLED=0 go build -o "$tmp/sqlite-bin" "$tmp/sqlite/main.go"
export FLOOR_DIR="$tmp/sqlite"
export CLINSIGHT_WORKSPACE=${CLINSIGHT_WORKSPACE:-$tmp/ws} OLLAMA_HOST=127.0.0.1:1

# The commands timed: a label, a binary and its argument (if any) each.
labels=("hello-world Go binary" "libraries alone (${FLOOR_TAGS:-nogui})" "cobra + SQLite tables")
cbins=("$tmp/hello-bin" "$tmp/libs-bin" "$tmp/sqlite-bin")
cargs=("" "" "")
for bin in "${bins[@]}"; do
  labels+=("$(basename "$bin") --help" "$(basename "$bin") tables")
  cbins+=("$bin" "$bin")
  cargs+=(--help tables)
done

# run C: runs command C, its output discarded.
run() { "${cbins[$1]}" ${cargs[$1]:+"${cargs[$1]}"} >/dev/null 2>&1 || true; }

# walltimes RUNS: runs every command RUNS times, in turn (one run of each,
# then the next round), so that a change in the machine's load during the
# measurement hits every command alike, and prints the median, min and max
# wall time of each in ms.
walltimes() {
  local n=$1 i c t0 t1
  for c in "${!labels[@]}"; do
    run "$c" # warm the page cache
    : >"$tmp/times.$c"
  done
  for i in $(seq "$n"); do
    for c in "${!labels[@]}"; do
      t0=${EPOCHREALTIME/[.,]/} # µs, without a date process of its own
      run "$c"
      t1=${EPOCHREALTIME/[.,]/}
      echo $((t1 - t0)) >>"$tmp/times.$c"
    done
  done
  for c in "${!labels[@]}"; do
    printf '%-40s ' "${labels[$c]}"
    sort -n "$tmp/times.$c" | awk '{v[NR]=$1} END {m = (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2;
      printf "median %6.1f ms  min %6.1f  max %6.1f  (%d runs)\n", m/1000, v[1]/1000, v[NR]/1000, NR}'
  done
}

# cpu RUNS CMD...: prints the mean processor time (task-clock, all
# threads) and page faults of RUNS runs, which a busy machine changes less
# than the elapsed time (the page faults hardly at all); nothing without
# perf.
cpu() {
  command -v perf >/dev/null || return 0
  local n=$1
  shift
  perf stat -r "$n" -x, -e task-clock,page-faults "$@" 2>&1 >/dev/null | awk -F, '
    /task-clock/ {t = $1} /page-faults/ {f = $1}
    END {printf "%-40s processor time %6.1f ms, %5d page faults (means of %d runs, perf stat)\n", label, t, f, n}' label="$LABEL" n="$n"
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
walltimes "$runs"
LABEL="hello-world Go binary" cpu "$runs" "$tmp/hello-bin"
LABEL="libraries alone (${FLOOR_TAGS:-nogui})" cpu "$runs" "$tmp/libs-bin"
LABEL="cobra + SQLite tables" cpu "$runs" "$tmp/sqlite-bin"
for bin in "${bins[@]}"; do
  LABEL="$(basename "$bin") --help" cpu "$runs" "$bin" --help
  LABEL="$(basename "$bin") tables" cpu "$runs" "$bin" tables
done
echo "load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"
for bin in "${bins[@]}"; do
  echo
  echo "package initialisation of $(basename "$bin") --help (GODEBUG=inittrace=1), largest by bytes allocated:"
  GODEBUG=inittrace=1 "$bin" --help 2>&1 >/dev/null | awk '/^init /{printf "%-50s %8s ms %10d bytes %6d allocs\n", $2, $5, $8, $10}' | sort -k4 -n -r | head -10
  GODEBUG=inittrace=1 "$bin" --help 2>&1 >/dev/null | awk '/^init /{t+=$5; b+=$8; a+=$10} END {printf "all packages: %.1f ms, %d bytes, %d allocs\n", t, b, a}'
  GODEBUG=inittrace=1 "$bin" --help 2>&1 >/dev/null | awk '/^init github.com\/clinsight\/clinsight\//{t+=$5; b+=$8; a+=$10} END {printf "Clinsight'"'"'s own packages: %.1f ms, %d bytes, %d allocs (internal/initcost bounds each)\n", t, b, a}'
done
