#!/usr/bin/env bash
# Installs the Apache Hadoop 3.5.0 Java client jars (taken from PyPI's pyspark==4.3.0) into a cache
# directory and prints that directory. Idempotent: does nothing when the jars are already there.
#
#   scripts/install-hadoop-client.sh            # cache = $RHDFS_CACHE or ~/.cache/rhdfs
#   RHDFS_HADOOP_CLIENT_DIR=<cache>/hadoop-client is what the integration tests look for.
#
# Needs: Java 17 (installed with apt-get when missing and we are root), python3 with pip.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${RHDFS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rhdfs}"
DEST="$CACHE/hadoop-client"
PYSPARK_VERSION="4.3.0"
HADOOP_VERSION="3.5.0"
WANT=("hadoop-client-api-$HADOOP_VERSION.jar" "hadoop-client-runtime-$HADOOP_VERSION.jar")

log() { echo "install-hadoop-client: $*" >&2; }

have_jars() {
    local j
    for j in "${WANT[@]}"; do [[ -s "$DEST/$j" ]] || return 1; done
    compgen -G "$DEST/slf4j-api-*.jar" >/dev/null || return 1
}

ensure_java() {
    local v=""
    if command -v java >/dev/null 2>&1; then
        v="$(java -version 2>&1 || true)"
    fi
    if grep -Eq 'version "(1[7-9]|[2-9][0-9])' <<<"$v"; then
        return 0
    fi
    log "Java 17+ not found; installing openjdk-17-jre-headless"
    local sudo=""
    if [[ "$(id -u)" != 0 ]]; then
        command -v sudo >/dev/null 2>&1 || { log "not root and no sudo: install openjdk-17-jre-headless yourself"; exit 1; }
        sudo="sudo"
    fi
    $sudo apt-get update >&2
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y openjdk-17-jre-headless >&2
    java -version >&2
}

ensure_java

if have_jars; then
    echo "$DEST"
    exit 0
fi

mkdir -p "$CACHE/pypi" "$DEST"

# Find an already-downloaded archive, else download it (sdist or wheel, whichever PyPI serves).
find_archive() {
    find "$CACHE/pypi" -maxdepth 1 -type f \( -name "pyspark-$PYSPARK_VERSION.tar.gz" -o -name "pyspark-$PYSPARK_VERSION-*.whl" -o -name "pyspark-$PYSPARK_VERSION.zip" \) | head -n1
}
ARCHIVE="$(find_archive)"
if [[ -z "$ARCHIVE" ]]; then
    log "downloading pyspark==$PYSPARK_VERSION from PyPI into $CACHE/pypi (~400 MB)"
    python3 -m pip download --quiet --no-deps --no-binary :none: "pyspark==$PYSPARK_VERSION" -d "$CACHE/pypi" >&2 \
        || python3 -m pip download --quiet --no-deps "pyspark==$PYSPARK_VERSION" -d "$CACHE/pypi" >&2
    ARCHIVE="$(find_archive)"
    [[ -n "$ARCHIVE" ]] || { log "pip download produced no pyspark archive in $CACHE/pypi"; exit 1; }
fi
log "extracting Hadoop client jars from $ARCHIVE"

# Extract every member whose basename is one of the wanted jars (any directory inside the archive,
# normally .../pyspark/jars/ or deps/jars/) flat into $DEST. python3's zipfile/tarfile need no
# unzip/tar binaries and handle both archive kinds.
TMP="$(mktemp -d "$DEST/.extract.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT
python3 - "$ARCHIVE" "$TMP" "$HADOOP_VERSION" <<'PY'
import os, re, shutil, sys, tarfile, zipfile
archive, out, hv = sys.argv[1], sys.argv[2], sys.argv[3]
pat = re.compile(r"^(hadoop-client-api-%s\.jar|hadoop-client-runtime-%s\.jar|slf4j-api-[0-9][^/]*\.jar)$"
                 % (re.escape(hv), re.escape(hv)))
found = []
def take(name, opener):
    base = name.rsplit("/", 1)[-1]
    if not pat.match(base) or "/jars/" not in "/" + name:
        return
    if os.path.exists(os.path.join(out, base)):
        return
    with opener() as src, open(os.path.join(out, base), "wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
    found.append(name)
if zipfile.is_zipfile(archive):
    with zipfile.ZipFile(archive) as z:
        for n in z.namelist():
            take(n, lambda n=n: z.open(n))
else:
    with tarfile.open(archive, "r:*") as t:
        for m in t:
            if m.isfile():
                take(m.name, lambda m=m: t.extractfile(m))
for n in found:
    print("  " + n, file=sys.stderr)
if not found:
    sys.exit("no Hadoop client jars found in " + archive)
PY
for f in "$TMP"/*.jar; do mv -f "$f" "$DEST/"; done

if ! have_jars; then
    log "missing jars after extraction; $DEST has: $(ls "$DEST" | tr '\n' ' ')"
    exit 1
fi
echo "$DEST"
