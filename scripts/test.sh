#!/usr/bin/env bash
# Runs every test: installs what the compatibility tests need (Java 17 and the Apache Hadoop
# 3.5 client jars, from Debian's and PyPI's registries), then the whole workspace's tests.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-hadoop-client.sh
export RHDFS_HADOOP_CLIENT_DIR="${RHDFS_HADOOP_CLIENT_DIR:-$PWD/.cache/hadoop-client}"
# The Java client tests must run, not skip, wherever this script runs.
export RHDFS_REQUIRE_JAVA=1

cargo test --workspace --all-targets "$@"
