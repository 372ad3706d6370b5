# Sourced by the install tests (see run). Gives:
#   no_rust_toolchain         fails when cargo, rustc or rustup is on the path
#   start_sandbox BIN DIR     starts the sandbox BIN (use $STOREFRONT_SANDBOX_BIN); ready file DIR/ready.json, pid in $sandbox_pid
#   sandbox_origin DIR        prints the sandbox's origin from DIR/ready.json
#   pass WHAT, fail WHAT      count a check that passed ("ok   WHAT") or failed ("FAIL WHAT", on
#                             stderr), in $passed and $failed
#   check WHAT CMD...         runs CMD: pass WHAT if it succeeds, fail WHAT if not
#   finish                    prints "install-NAME: N passed, M failed" (NAME: this script's) and
#                             fails if any check failed
#   unset_storefront_env      unsets every STOREFRONT_* variable (copy what you still need first)
#   hide_other_sandboxes      unsets STOREFRONT_SANDBOX_BIN and removes from PATH (exported) every
#                             directory holding a storefront-sandbox: the only sandbox left is the
#                             one the package under test brings
#   no_other_sandbox          succeeds when no STOREFRONT_SANDBOX_BIN is set and no storefront-sandbox
#                             is on PATH; otherwise says which one there is, on stderr
#   zip_holds_folder ZIP DIR  succeeds when ZIP holds exactly DIR's files (same contents) under the
#                             top folder named as DIR is (needs php: PharData reads the zip)
# and kills the sandbox on exit.
set -euo pipefail
source "$STOREFRONT_CI/sandbox.sh"
sandbox_pid=
trap '[[ -n "$sandbox_pid" ]] && kill "$sandbox_pid" 2>/dev/null || true' EXIT

no_rust_toolchain() {
  local tool
  for tool in cargo rustc rustup; do
    if command -v "$tool" >/dev/null; then
      echo "install test: $tool is on the path ($(command -v "$tool")); the test must run without it" >&2
      exit 1
    fi
  done
}

sandbox_origin() {
  python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["origin"])' "$1/ready.json"
}

passed=0
failed=0
pass() { echo "ok   $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1" >&2; failed=$((failed + 1)); }
check() {
  local what=$1
  shift
  if "$@"; then pass "$what"; else fail "$what"; fi
}
finish() {
  echo "install-$(basename "$0" .sh): $passed passed, $failed failed"
  [[ "$failed" == 0 ]]
}

unset_storefront_env() {
  local name
  for name in $(compgen -e); do
    [[ "$name" == STOREFRONT_* ]] && unset "$name"
  done
  return 0
}

hide_other_sandboxes() {
  unset STOREFRONT_SANDBOX_BIN
  local dir path_dirs kept=()
  IFS=: read -ra path_dirs <<<"$PATH"
  for dir in "${path_dirs[@]}"; do
    [[ -e "${dir:-.}/storefront-sandbox" ]] || kept+=("$dir")
  done
  PATH=$(IFS=:; echo "${kept[*]}")
  export PATH
}

no_other_sandbox() {
  [[ -z "${STOREFRONT_SANDBOX_BIN+set}" ]] || { echo "STOREFRONT_SANDBOX_BIN is set: $STOREFRONT_SANDBOX_BIN" >&2; return 1; }
  ! command -v storefront-sandbox >/dev/null || { echo "storefront-sandbox on PATH: $(command -v storefront-sandbox)" >&2; return 1; }
}

zip_holds_folder() {
  php -r '
    [$script, $zip, $dir] = $argv;
    $fromZip = [];
    foreach (new RecursiveIteratorIterator(new PharData($zip)) as $file) {
        $fromZip[substr($file->getPathname(), strlen("phar://$zip/"))] = sha1_file($file->getPathname());
    }
    $fromDir = [];
    foreach (new RecursiveIteratorIterator(new RecursiveDirectoryIterator($dir, FilesystemIterator::SKIP_DOTS)) as $file) {
        $fromDir[basename($dir) . "/" . substr($file->getPathname(), strlen($dir) + 1)] = sha1_file($file->getPathname());
    }
    ksort($fromZip);
    ksort($fromDir);
    exit($fromZip === $fromDir ? 0 : 1);
  ' "$1" "$2"
}
