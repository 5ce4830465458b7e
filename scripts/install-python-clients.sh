#!/usr/bin/env bash
# Installs the Python clients the compatibility tests drive (python_clients.rs): HdfsCLI (the
# `hdfs` package, WebHDFS) and hdfs-native's Python bindings (RPC), from PyPI, when missing.
set -euo pipefail
if python3 -c "import hdfs, hdfs_native" 2>/dev/null; then
    exit 0
fi
python3 -m pip install --quiet --disable-pip-version-check "hdfs==2.7.3" "hdfs-native==0.14.7" >&2
python3 -c "import hdfs, hdfs_native"
