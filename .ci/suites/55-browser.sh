#!/usr/bin/env bash
# Checkout in a real browser: headless Chromium from Debian's `chromium` package (never a
# downloaded browser build), driven by playwright-core (tests/browser, locked by its
# package-lock.json), pays a merchant payment on the in-process TLS sandbox's checkout and lands
# on the return_url; the SDK then reads `paid` (tests/browser_checkout.rs, ignored by a plain
# `cargo test`). Screenshots are kept in target/test-artifacts/browser-checkout/.
# Then the sandbox's developer dashboard (/_sandbox/): a payment created through the SDK is paid
# and refunded with the dashboard's buttons, and its timeline and notification attempts show up
# (tests/browser_dashboard.rs; screenshots in target/test-artifacts/browser-dashboard/).
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! command -v chromium >/dev/null; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium
fi
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm
fi
command -v openssl >/dev/null || { apt-get update -qq && apt-get install -y -qq openssl; }
# Reinstall the driver's dependencies when missing or older than the lock file.
if [[ ! -d tests/browser/node_modules/playwright-core \
      || tests/browser/package-lock.json -nt tests/browser/node_modules/.package-lock.json ]]; then
  (cd tests/browser && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
fi
echo "browser: $(chromium --version 2>/dev/null), node $(node --version)"
CHROMIUM_BIN="$(command -v chromium)" \
  cargo test -p storefront --test browser_checkout --test browser_dashboard -- --ignored --nocapture
target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
echo "screenshots: $(ls "$target_dir"/test-artifacts/browser-{checkout,dashboard}/*.png | tr '\n' ' ')"
