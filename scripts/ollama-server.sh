#!/usr/bin/env bash
# ollama-server.sh — build (once) and start a CPU-only Ollama server for
# Clinsight's integration tests, from the Go module proxy (no downloads of
# release binaries or model weights).
#
# Usage:
#   scripts/ollama-server.sh build            build if missing; print the binary path
#   scripts/ollama-server.sh path             print the binary path (exit 1 if not built)
#   scripts/ollama-server.sh start PORT DIR   run `ollama serve` on 127.0.0.1:PORT with
#                                             OLLAMA_MODELS=DIR in the foreground
#
# The binary lives outside the work tree, in
#   ${XDG_CACHE_HOME:-$HOME/.cache}/clinsight/ollama-$OLLAMA_VERSION/ollama
# and is reused when present. A cold build takes 10-15 minutes on 2 cores (measured: 864 s).
# Progress goes to stderr; `build` prints only the binary path on stdout.
set -euo pipefail

OLLAMA_VERSION=0.17.4
MALGO_VERSION=v0.11.24
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/clinsight/ollama-${OLLAMA_VERSION}"
BIN="$CACHE/ollama"
GO="${GO:-go}"

log() { echo "ollama-server.sh: $*" >&2; }

sudo_cmd() {
	if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

apt_deps() {
	local pkgs=(nlohmann-json3-dev libstb-dev gcc g++)
	if dpkg -s "${pkgs[@]}" >/dev/null 2>&1; then
		return
	fi
	log "installing ${pkgs[*]} (apt)"
	sudo_cmd apt-get update -qq >&2
	sudo_cmd env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${pkgs[@]}" >&2
}

build() {
	if [ -x "$BIN" ]; then
		echo "$BIN"
		return
	fi
	command -v "$GO" >/dev/null || { log "go is not installed"; exit 1; }
	apt_deps
	mkdir -p "$CACHE"
	local inc="$CACHE/include"
	mkdir -p "$inc/miniaudio"
	# miniaudio.h ships in the malgo module; ollama's cgo code includes it as
	# <miniaudio/miniaudio.h>.
	local malgo_dir
	malgo_dir=$(cd "$CACHE" && GOFLAGS=-mod=mod "$GO" mod download -json "github.com/gen2brain/malgo@${MALGO_VERSION}" |
		sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
	if [ -z "$malgo_dir" ] || [ ! -f "$malgo_dir/miniaudio.h" ]; then
		log "miniaudio.h not found in github.com/gen2brain/malgo@${MALGO_VERSION} (dir: '${malgo_dir}')"
		exit 1
	fi
	cp "$malgo_dir/miniaudio.h" "$inc/miniaudio/miniaudio.h"
	chmod u+w "$inc/miniaudio/miniaudio.h"
	log "building ollama ${OLLAMA_VERSION} into $CACHE (about 10 minutes on 2 cores)"
	local start=$SECONDS
	# Build in a temporary directory so the work tree's go.mod is not consulted.
	local tmp
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' RETURN
	(cd "$tmp" && CGO_ENABLED=1 CGO_CPPFLAGS="-I$inc" GOBIN="$CACHE/bin.tmp" GOFLAGS= \
		"$GO" install -ldflags "-s -w -X github.com/ollama/ollama/version.Version=${OLLAMA_VERSION}" \
		"github.com/ollama/ollama@v${OLLAMA_VERSION}" >&2)
	mv "$CACHE/bin.tmp/ollama" "$BIN"
	rmdir "$CACHE/bin.tmp" 2>/dev/null || true
	log "built $BIN in $((SECONDS - start)) s"
	echo "$BIN"
}

case "${1:-}" in
build)
	build
	;;
path)
	[ -x "$BIN" ] || { log "not built yet: run $0 build"; exit 1; }
	echo "$BIN"
	;;
start)
	port="${2:?usage: $0 start PORT MODELS_DIR}"
	models="${3:?usage: $0 start PORT MODELS_DIR}"
	bin=$(build)
	mkdir -p "$models"
	exec env OLLAMA_HOST="127.0.0.1:${port}" OLLAMA_MODELS="$models" OLLAMA_NO_CLOUD=1 \
		"$bin" serve
	;;
*)
	sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
	;;
esac
