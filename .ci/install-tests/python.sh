#!/usr/bin/env bash
# Install test of the Python wheel (see run): `pip install` of $STOREFRONT_DIST/python's wheel in a
# fresh venv, without Rust or the checkout, then the example program against a standalone sandbox
# with no STOREFRONT_* variable set: the package must find the library it carries.
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
  *-py3-none-manylinux_*.whl) pass "wheel file name carries a py3-none-manylinux tag" ;;
  *) fail "wheel file name $(basename "$wheel") is not py3-none-manylinux_*" ;;
esac
if (($(stat -c %s "$wheel") < 3000000)); then pass "wheel under 3 MB"; else fail "wheel is 3 MB or more"; fi

# Tools (auditwheel, and pyelftools with it) in their own venv, apart from the user's.
python3 -m venv tools
tools/bin/python -m pip install --quiet --disable-pip-version-check "auditwheel>=6.1"
if tools/bin/auditwheel show "$wheel" >auditwheel.txt 2>&1 \
  && grep -Eq 'consistent with the[[:space:]]+following platform tag: "manylinux_[0-9]+_[0-9]+_' \
    <(tr '\n' ' ' <auditwheel.txt); then
  pass "auditwheel show: $(tr '\n' ' ' <auditwheel.txt | grep -Eo 'platform tag: "[^"]*"')"
else
  cat auditwheel.txt >&2
  fail "auditwheel show does not find the wheel manylinux-consistent"
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

# The example, copied out of the checkout, against a standalone sandbox.
cp "$STOREFRONT_EXAMPLES/python/storefront_example.py" .
start_sandbox "$STOREFRONT_SANDBOX_BIN" "$PWD"
if clean venv/bin/python storefront_example.py "$PWD/ready.json" >example.log 2>&1; then
  pass "examples/python/storefront_example.py against the sandbox"
else
  cat example.log >&2
  fail "examples/python/storefront_example.py"
fi

echo "install-python: $passed passed, $failed failed"
((failed == 0))
