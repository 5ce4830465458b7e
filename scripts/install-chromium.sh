#!/usr/bin/env bash
# Installs Debian's headless-capable Chromium (for the web UI test) when it is missing, the way
# install-hadoop-client.sh installs Java: apt-get as root (or through sudo). Prints the
# browser's path.
set -euo pipefail

log() { echo "install-chromium: $*" >&2; }

find_browser() {
    command -v chromium 2>/dev/null || command -v chromium-browser 2>/dev/null || true
}

b="$(find_browser)"
if [[ -z "$b" ]]; then
    log "chromium not found; installing Debian's chromium package"
    sudo=""
    if [[ "$(id -u)" != 0 ]]; then
        command -v sudo >/dev/null 2>&1 || { log "not root and no sudo: install chromium yourself"; exit 1; }
        sudo="sudo"
    fi
    $sudo apt-get update >&2
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium >&2
    b="$(find_browser)"
fi
[[ -n "$b" ]] || { log "chromium is still missing"; exit 1; }
echo "$b"
