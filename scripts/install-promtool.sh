#!/usr/bin/env bash
# Installs `promtool` (Debian's prometheus package ships it) for the metrics tests, which run
# `promtool check metrics` on both daemons' /metrics. Idempotent: does nothing when promtool
# is already on PATH. Prints promtool's path.
set -euo pipefail

log() { echo "install-promtool: $*" >&2; }

if ! command -v promtool >/dev/null 2>&1; then
    log "promtool not found; installing Debian's prometheus package"
    sudo=""
    if [[ "$(id -u)" != 0 ]]; then
        command -v sudo >/dev/null 2>&1 || { log "not root and no sudo: install the prometheus package yourself"; exit 1; }
        sudo="sudo"
    fi
    $sudo apt-get update >&2
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends prometheus >&2
    # The package starts a Prometheus server where an init system runs; the tests need only
    # the promtool binary.
fi
command -v promtool
