#!/usr/bin/env bash
# Runs every test: installs what the compatibility tests need (Java 17 and the Apache Hadoop
# 3.5 client jars, from Debian's and PyPI's registries; promtool from Debian's prometheus
# package; Chromium for the web UI test; HdfsCLI and hdfs-native's Python bindings from PyPI), then the whole workspace's tests.
set -euo pipefail
cd "$(dirname "$0")/.."

# The script prints the directory holding the jars (a cache under ~/.cache/rhdfs by default,
# or $RHDFS_CACHE), so a second run downloads nothing.
jars="$(bash scripts/install-hadoop-client.sh)"
export RHDFS_HADOOP_CLIENT_DIR="${RHDFS_HADOOP_CLIENT_DIR:-$jars}"
# The Java client tests must run, not skip, wherever this script runs.
export RHDFS_REQUIRE_JAVA=1
# promtool (Debian's prometheus package) checks both daemons' /metrics.
bash scripts/install-promtool.sh >/dev/null
export RHDFS_REQUIRE_PROMTOOL=1
# Debian's chromium for the web UI test (web_ui.rs), which must run, not skip, here.
export RHDFS_CHROMIUM="${RHDFS_CHROMIUM:-$(bash scripts/install-chromium.sh)}"
export RHDFS_REQUIRE_CHROMIUM=1

# HdfsCLI and hdfs-native's Python bindings (PyPI) for python_clients.rs, which must run here.
bash scripts/install-python-clients.sh
export RHDFS_REQUIRE_PYTHON=1

cargo test --workspace --all-targets --no-fail-fast "$@"
