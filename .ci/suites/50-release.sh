#!/usr/bin/env bash
# Release and install (issue: "every language installs storefront the way it installs everything
# else"): the release command builds the stripped release library once and every artifact into
# a fresh folder, prints each artifact's size against its budget, then each artifact is
# installed the way its users install it, in a fresh scratch folder with no checkout and no
# Rust toolchain on the path (.ci/install-tests/run), and used against the sandbox binary the
# release ships (its tarball, unpacked here; the wheel of the same binary is python.sh's).
set -euo pipefail
cd "$(dirname "$0")/../.."
# The server library links the system SQLite; the store and inbox tests use real servers.
bash .ci/install-servers.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bash .ci/release "$work/dist"
tar -C "$work" -xzf "$work"/dist/sandbox/storefront-sandbox-*-linux.tar.gz
bash .ci/install-tests/run "$work/dist" "$work"/storefront-sandbox-*-linux/storefront-sandbox
echo "release: every artifact built, under its size budget, and installed from scratch"
