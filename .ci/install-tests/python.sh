#!/usr/bin/env bash
# Install test of the Python wheel (see run): `pip install` of $STOREFRONT_DIST/python's wheel in a
# fresh venv, without Rust or the checkout, then the example program against a standalone sandbox
# with no STOREFRONT_* variable set: the package must find the library it carries; then the
# binding README's quick start, taken out of the page and run as written against the sandbox the
# sandbox wheel installed.
# (The from-source path, `pip wheel ./bindings/python`, needs cargo: .ci/suites/31-python.sh.)
set -euo pipefail
source "$STOREFRONT_CI/install-tests/common.sh"
no_rust_toolchain
repo="$(cd "$STOREFRONT_CI/.." && pwd)"

passed=0
failed=0
pass() { passed=$((passed + 1)); echo "ok: $*"; }
fail() { failed=$((failed + 1)); echo "FAIL: $*" >&2; }

shopt -s nullglob
wheels=("$STOREFRONT_DIST"/python/storefront-*.whl)
if ((${#wheels[@]} != 1)); then
  echo "install-python: expected one wheel in $STOREFRONT_DIST/python, found ${#wheels[@]}" >&2
  exit 1
fi
wheel="${wheels[0]}"
echo "wheel: $(basename "$wheel"), $(stat -c %s "$wheel") bytes"
case "$(basename "$wheel")" in
  *-py3-none-manylinux2014_*.manylinux_2_17_*.whl) pass "wheel file name carries the py3-none manylinux2014 (glibc 2.17) tags" ;;
  *) fail "wheel file name $(basename "$wheel") is not py3-none-manylinux2014_*.manylinux_2_17_*" ;;
esac
if (($(stat -c %s "$wheel") < 3000000)); then pass "wheel under 3 MB"; else fail "wheel is 3 MB or more"; fi

# Tools (auditwheel, and pyelftools with it) in their own venv, apart from the user's.
python3 -m venv tools
tools/bin/python -m pip install --quiet --disable-pip-version-check "auditwheel>=6.1"
# The library links the system's libsqlite3 on purpose (one SQLite per process, shared with
# Python's own sqlite3 module; .ci/release.d/python.sh repairs with --exclude libsqlite3.so.0),
# so `auditwheel show` judges the system's libsqlite3 too (built against this machine's glibc):
# the wheel's own library is read here instead. Every library it needs must be in the manylinux
# policy but libsqlite3, and its newest GLIBC_ symbol version must fit the tag it carries.
tag=$(basename "$wheel" | grep -Eo 'manylinux_[0-9]+_[0-9]+_[a-z0-9_]+' || true)
cat >needed.py <<'PY'
import io, re, sys, zipfile
from elftools.elf.elffile import ELFFile
from elftools.elf.dynamic import DynamicSection
from elftools.elf.gnuversions import GNUVerNeedSection
policy = {"libc.so.6", "libm.so.6", "libgcc_s.so.1", "libpthread.so.0", "libdl.so.2",
          "librt.so.1", "libutil.so.1", "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1"}
tag = sys.argv[2]
floor = tuple(map(int, re.match(r"manylinux_(\d+)_(\d+)_", tag).groups()))
with zipfile.ZipFile(sys.argv[1]) as wheel:
    data = wheel.read("storefront/libstorefront.so")
needed, versions = set(), set()
for section in ELFFile(io.BytesIO(data)).iter_sections():
    if isinstance(section, DynamicSection):
        needed |= {t.needed for t in section.iter_tags() if t.entry.d_tag == "DT_NEEDED"}
    if isinstance(section, GNUVerNeedSection):
        for _, auxiliaries in section.iter_versions():
            for aux in auxiliaries:
                m = re.fullmatch(r"GLIBC_(\d+)\.(\d+)(?:\.\d+)?", aux.name)
                if m:
                    versions.add((int(m.group(1)), int(m.group(2))))
outside = sorted(needed - policy)
newest = max(versions)
print(f"libstorefront.so needs {sorted(needed)}; outside the manylinux policy: {outside}; "
      f"newest GLIBC_{newest[0]}.{newest[1]} for the tag {tag}")
sys.exit(0 if outside == ["libsqlite3.so.0"] and newest <= floor else 1)
PY
if [[ -n "$tag" ]] && tools/bin/python needed.py "$wheel" "$tag" >auditwheel.txt 2>&1; then
  cat auditwheel.txt
  pass "the library's glibc fits $tag; only libsqlite3.so.0 (the system's, on purpose) is outside the manylinux policy"
else
  cat auditwheel.txt >&2
  fail "the wheel needs more than the manylinux policy and the system libsqlite3, or its glibc does not fit $tag"
fi

# The user's venv: the wheel, nothing else.
python3 -m venv venv
venv/bin/python -m pip install --quiet --disable-pip-version-check "$wheel"
venv_dir="$(cd venv && pwd)"

# Everything below runs with no STOREFRONT_* variable (and the scratch folder as working dir).
unset_storefront=()
for name in $(compgen -e); do
  [[ "$name" == STOREFRONT_* ]] && unset_storefront+=(-u "$name")
done
clean() { env "${unset_storefront[@]}" "$@"; }

package_file=$(clean venv/bin/python -c 'import storefront; print(storefront.__file__)')
echo "storefront.__file__ = $package_file"
if [[ "$package_file" == "$venv_dir"/* && "$package_file" != "$repo"/* ]]; then
  pass "storefront is imported from the venv"
else
  fail "storefront is imported from $package_file, not from $venv_dir"
fi

library="$(dirname "$package_file")/libstorefront.so"
if [[ -f "$library" ]]; then
  pass "the installed package carries libstorefront.so ($(stat -c %s "$library") bytes)"
  # A release build: stripped (no .symtab), no DWARF sections, and far from a debug build's size.
  if tools/bin/python - "$library" <<'EOF'
import os, sys
from elftools.elf.elffile import ELFFile
path = sys.argv[1]
with open(path, "rb") as f:
    sections = {s.name for s in ELFFile(f).iter_sections()}
debug = sorted(n for n in sections if n.startswith((".debug", ".zdebug")) or n == ".symtab")
size = os.path.getsize(path)
print(f"library: {size} bytes, sections {'.symtab/.debug: ' + ', '.join(debug) if debug else 'without .symtab or .debug_*'}")
sys.exit(1 if debug or size > 8 * 1024 * 1024 else 0)
EOF
  then
    pass "the library is a stripped release build"
  else
    fail "the library looks like a debug or unstripped build"
  fi
else
  fail "no libstorefront.so beside $package_file"
fi

versions=$(clean venv/bin/python -c \
  'import importlib.metadata as m, storefront; print(m.version("storefront"), storefront.library_version())')
read -r dist_version lib_version <<<"$versions"
if [[ -n "$dist_version" && "$dist_version" == "$lib_version" ]]; then
  pass "package and bundled library are both version $dist_version"
else
  fail "package version $dist_version, library version $lib_version"
fi

# The sandbox wheel in the same venv: `storefront-sandbox` on the venv's PATH, the
# `storefront_sandbox` package, and its pytest plugin.
sandbox_wheels=("$STOREFRONT_DIST"/sandbox/storefront_sandbox-*-py3-none-manylinux*.whl)
if ((${#sandbox_wheels[@]} == 1)); then
  pass "one sandbox wheel, $(basename "${sandbox_wheels[0]}"), $(stat -c %s "${sandbox_wheels[0]}") bytes"
else
  fail "expected one storefront_sandbox manylinux wheel in $STOREFRONT_DIST/sandbox"
fi
venv/bin/python -m pip install --quiet --disable-pip-version-check "${sandbox_wheels[0]}" "pytest>=7"
if [[ -x venv/bin/storefront-sandbox ]] && [[ "$(clean venv/bin/python -c   'import storefront_sandbox; print(storefront_sandbox.binary_path())')" == "$venv_dir/bin/storefront-sandbox" ]]; then
  pass "pip put storefront-sandbox on the venv's PATH and storefront_sandbox finds it"
else
  fail "storefront-sandbox is not in venv/bin, or storefront_sandbox.binary_path() does not name it"
fi

# A shop's own test, written with the plugin's fixture, against the shipped sandbox.
cat >test_shop.py <<'PY'
import uuid

import storefront


def test_create_and_query(storefront_sandbox_config, storefront_sandbox):
    with storefront.Client(storefront_sandbox_config) as client:
        created = client.create_merchant_payment(
            {"external_reference": f"shop-{uuid.uuid4()}", "amount_minor": 1250, "currency": "USD"}
        )
        order_no = created["order_no"]
        assert client.merchant_payment(order_no)["status"] == "pending"
        assert storefront_sandbox.trigger("pay", order_no, "--channel", "ch_card_usd")["status"] == "paid"
        assert client.merchant_payment(order_no)["status"] == "paid"
PY
if clean venv/bin/python -m pytest -q -p no:cacheprovider test_shop.py >pytest.log 2>&1; then
  pass "a shop's pytest test with the storefront_sandbox fixtures creates, queries and pays a payment"
else
  cat pytest.log >&2
  fail "the pytest fixtures of storefront_sandbox"
fi

# The example, copied out of the checkout, against the sandbox the wheel installed.
cp "$STOREFRONT_EXAMPLES/python/storefront_example.py" .
start_sandbox "$venv_dir/bin/storefront-sandbox" "$PWD"
if clean venv/bin/python storefront_example.py "$PWD/ready.json" >example.log 2>&1; then
  pass "examples/python/storefront_example.py against the sandbox"
else
  cat example.log >&2
  fail "examples/python/storefront_example.py"
fi

# bindings/python/README.md's quick start ("Both flows", the block after its install-test marker),
# taken out of the page (.ci/lib/md-block) and run as written from the installed package only: the
# scratch folder as working directory, no PYTHONPATH, nothing of this script's environment but
# PATH, and exactly the variables of the sandbox the wheel installed (its ready file's "env", the
# README's sandbox lines) plus USER_ACCESS_TOKEN, the user token the block reads (minted for alice
# after a reset, .ci/lib/sandbox_env.py). The sandbox's request log must then hold one
# merchant payment created and that payment queried.
python3 "$STOREFRONT_CI/lib/md-block" "$repo/bindings/python/README.md" "python quickstart" >quickstart.py
mapfile -t quickstart_vars < <(python3 "$STOREFRONT_CI/lib/sandbox_env.py" "$PWD/ready.json")
if env -i PATH="$PATH" HOME="$PWD" "${quickstart_vars[@]}" venv/bin/python quickstart.py >quickstart.log 2>&1 \
  && grep -qx '12.50' quickstart.log && grep -qx 'final' quickstart.log \
  && order_no=$(python3 "$STOREFRONT_CI/lib/quickstart-sandbox" check "$PWD/ready.json"); then
  pass "bindings/python/README.md's quick start, as written, created and queried merchant payment $order_no"
else
  cat quickstart.log >&2
  fail "bindings/python/README.md's quick start against the installed package and sandbox"
fi

echo "install-python: $passed passed, $failed failed"
((failed == 0))
