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

# The release checks its prerequisites before building anything: with composer missing from
# the path it stops at once, naming composer (and how to install it), and creates no output.
bare="$work/path-without-composer"
mkdir -p "$bare"
IFS=: read -ra path_dirs <<<"$PATH"
for dir in "${path_dirs[@]}"; do
  [[ -d "$dir" ]] || continue
  for exe in "$dir"/*; do
    name="${exe##*/}"
    if [[ -x "$exe" && ! -d "$exe" && "$name" != composer && ! -e "$bare/$name" ]]; then
      ln -s "$exe" "$bare/$name"
    fi
  done
done
if PATH="$bare" bash .ci/release "$work/not-built" >"$work/prerequisites.log" 2>&1; then
  cat "$work/prerequisites.log" >&2
  echo "release: .ci/release ran with composer missing from the path" >&2
  exit 1
fi
if ! grep -qE '^  composer +Debian package composer' "$work/prerequisites.log" \
  || ! grep -q 'nothing was built' "$work/prerequisites.log" || [[ -e "$work/not-built" ]]; then
  cat "$work/prerequisites.log" >&2
  echo "release: the prerequisite check did not name composer before building" >&2
  exit 1
fi
echo "release: a missing composer is reported before building:"
sed 's/^/  | /' "$work/prerequisites.log"

# A bare machine gets what is missing installed, explicitly.
bash .ci/release --install-prerequisites "$work/dist"

# Every release artifact the docs name (dist/...) exists in the release, by that name.
python3 .ci/release-doc-names "$work/dist" README.md bindings/*/README.md sandbox/README.md docs/*.md examples/*/README.md

tar -C "$work" -xzf "$work"/dist/sandbox/storefront-sandbox-*-linux.tar.gz
bash .ci/install-tests/run "$work/dist" "$work"/storefront-sandbox-*-linux/storefront-sandbox
echo "release: every artifact built, under its size budget, and installed from scratch"
