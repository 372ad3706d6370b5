#!/usr/bin/env bash
# Every fenced code block of README.md and bindings/*/README.md, run as written (issue 18 item 5):
# .ci/readme-blocks (its header documents the tags) runs the Python and PHP blocks against the
# standalone sandbox, configured only by the sandbox's own STOREFRONT_* lines (its ready file's
# "env"), each Python program also through `mypy --strict` (mypy from PyPI, in a venv kept under
# target/), each PHP block through `php -l`; checks the README's sandbox lines against what the
# sandbox prints; and fails on any block neither run nor tagged with the reason it is not. The
# Kotlin and Java blocks are only checked here to be tagged or programs (a main, a JUnit test):
# suite 40-kotlin compiles and runs them against the jar it builds (readme-blocks --jvm-project).
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v python3 >/dev/null || { apt-get update -qq && apt-get install -y -qq python3 python3-venv; }
command -v php >/dev/null || { apt-get update -qq && apt-get install -y -qq php-cli; }
# The PHP README's test class runs under Debian's PHPUnit, its trait starting this build's sandbox.
command -v phpunit >/dev/null || { apt-get update -qq && apt-get install -y -qq phpunit; }
python3 -c "import venv, ensurepip" 2>/dev/null || { apt-get update -qq && apt-get install -y -qq python3-venv; }
# One debug build serves the C, Python and PHP suites (cargo skips it when up to date).
cargo build --quiet -p storefront --features capi,uniffi -p storefront-sandbox
target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
venv="$target_dir/readme-blocks-venv"
# The venv also has Flask (pinned), the framework of the webhook receiver blocks (tag `receiver`):
# they are served on loopback (php -S, or the block's WSGI app under wsgiref with this venv's
# python, which runs every Python block) and must answer the sandbox's signed deliveries of a paid
# payment 2xx and a tampered delivery non-2xx.
flask_pin="flask==3.1.3"
if ! "$venv/bin/mypy" --version >/dev/null 2>&1 || ! "$venv/bin/python" -c 'import flask' 2>/dev/null; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check mypy "$flask_pin"
fi
export MYPY="$venv/bin/mypy" PYTHON="$venv/bin/python"
export STOREFRONT_LIB="$target_dir/debug/libstorefront.so"
export STOREFRONT_SANDBOX_BIN="$target_dir/debug/storefront-sandbox"

work=$(mktemp -d)
sandbox_pid=
trap 'kill "$sandbox_pid" 2>/dev/null || true; rm -rf "$work"' EXIT
source .ci/sandbox.sh
start_sandbox "$target_dir/debug/storefront-sandbox" "$work"
# The blocks get exactly the variables the sandbox gives (what `export` lines it prints, its ready
# file's "env"), added by the runner with the user token (.ci/lib/sandbox_env.py).
export STOREFRONT_READY_FILE="$work/ready.json"
python3 .ci/readme-blocks

# README.md's Rust blocks: doctests (src/lib.rs, cfg(readme_blocks)) compiled and run with the same
# variables as every program: the sandbox's own, after a reset, and USER_ACCESS_TOKEN
# (.ci/lib/sandbox_env.py). rustdoc drops a block whose info string holds a character it does not
# accept (' / . ( )), silently: the count below catches it.
while IFS= read -r line; do export "$line"; done < <(python3 .ci/lib/sandbox_env.py "$STOREFRONT_READY_FILE")
# Each returns storefront::Result from main, so an error of any call fails it; without the
# sandbox's variables all four that run fail (Config::from_env). Four run (quick start, rate
# limits, shared state, reconcile) and one is compiled only (the inbox server, production-only,
# counted as passed by rustdoc): a filter that matched nothing would pass silently.
RUSTDOCFLAGS="--cfg readme_blocks" cargo test --quiet -p storefront --all-features --doc ReadmeDoctests \
  2>&1 | tee "$work/rust-doctests.out"
grep -q "test result: ok. 5 passed" "$work/rust-doctests.out" \
  || { echo "36-readme-blocks: README.md's Rust doctests did not all run" >&2; exit 1; }

# The runner fails, naming file, line and language: a page whose Python chain (`continues`)
# reads a TypedDict result as an attribute (mypy --strict), whose PHP block calls an
# undefined function on its third line, whose PHP receiver acknowledges anything (so the
# tampered delivery too), and whose PHPUnit test class fails its assertion.
cat >"$work/broken.md" <<'MD'
# broken

```python
import storefront
client = storefront.Client.from_env()
```

```python continues
created = client.create_merchant_payment({"external_reference": "r-1", "amount_minor": 1, "currency": "USD"})
print(created.order_no)
```

```php
$client = Storefront\Client::fromEnv();
echo $client->merchantProfile()->name, "\n";
undefined_function();
```

```php receiver
echo 'ok';                  // acknowledges every delivery, forged or not
```

```php
final class BrokenTest extends PHPUnit\Framework\TestCase
{
    public function testPaid(): void { $this->assertTrue(false); }
}
```
MD
if python3 .ci/readme-blocks "$work/broken.md" >"$work/broken.out" 2>&1; then
  cat "$work/broken.out"; echo "readme-blocks passed a broken page" >&2; exit 1
fi
for expected in 'FAIL .*broken.md:3 (python): mypy --strict' 'broken.md:10\]: error: "CreatedMerchantPayment" has no attribute "order_no"' \
                'FAIL .*broken.md:13 (php): exit 255' 'undefined_function().*broken.md:16\]' \
                'FAIL .*broken.md:19 (php): receiver: a tampered delivery .* was answered 200' \
                'FAIL .*broken.md:23 (php): PHPUnit (exit 1)'; do
  grep -q "$expected" "$work/broken.out" || { cat "$work/broken.out"; echo "readme-blocks did not report: $expected" >&2; exit 1; }
done
rm -rf "$(sed -n 's/^the programs as run are kept in //p' "$work/broken.out")"
echo "readme-blocks: a broken page fails with its file, line and language; a receiver acknowledging a tampered delivery fails; a failing PHPUnit block fails"
