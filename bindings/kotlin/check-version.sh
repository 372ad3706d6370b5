#!/usr/bin/env bash
# Maven needs a literal version in a pom that is installed; Cargo.toml's [workspace.package]
# version (.ci/version) is the one place it is set. This fails when a pom says otherwise:
#   bindings/kotlin/pom.xml    <version> of dev.storefront:storefront
#   examples/kotlin/pom.xml    <storefront.version>, the dependency the example resolves
#   examples/java/pom.xml      <storefront.version>, the same for the Java example
#   bindings/kotlin-testing/pom.xml  <version> of dev.storefront:storefront-testing (it depends on
#                              dev.storefront:storefront:${project.version})
#   sandbox/jvm/pom.xml        <version> of dev.storefront:storefront-sandbox (the sandbox program
#                              in a jar)
# Usage: bindings/kotlin/check-version.sh          check (the release step and suite 40-kotlin)
#        bindings/kotlin/check-version.sh write    copy Cargo's version into the poms
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
cargo_version=$(bash "$repo/.ci/version")
[[ -n "$cargo_version" ]] || { echo "check-version: no version in Cargo.toml [workspace.package]" >&2; exit 1; }

python3 - "$repo" "$cargo_version" "${1:-check}" <<'PY'
import re, sys
import xml.etree.ElementTree as ET

repo, cargo, mode = sys.argv[1:4]
ns = {"m": "http://maven.apache.org/POM/4.0.0"}
# (file, XPath of the element, tag to rewrite textually)
places = [
    ("bindings/kotlin/pom.xml", "m:version", "version"),
    ("examples/kotlin/pom.xml", "m:properties/m:storefront.version", "storefront.version"),
    ("examples/java/pom.xml", "m:properties/m:storefront.version", "storefront.version"),
    ("bindings/kotlin-testing/pom.xml", "m:version", "version"),
    ("sandbox/jvm/pom.xml", "m:version", "version"),
]
bad = 0
for rel, path, tag in places:
    file = f"{repo}/{rel}"
    found = ET.parse(file).getroot().find(path, ns)
    value = found.text.strip() if found is not None and found.text else None
    if value == cargo:
        print(f"check-version: {rel} {tag} {value} = Cargo.toml {cargo}")
        continue
    if mode == "write" and value is not None:
        text = open(file).read()
        # The first element of that name is the one meant (the project's version comes before
        # any dependency's, and the property is defined once).
        text = re.sub(rf"<{re.escape(tag)}>\s*{re.escape(value)}\s*</{re.escape(tag)}>",
                      f"<{tag}>{cargo}</{tag}>", text, count=1)
        open(file, "w").write(text)
        print(f"check-version: {rel} {tag} {value} -> {cargo}")
        continue
    print(f"check-version: {rel} {tag} is {value!r} but Cargo.toml [workspace.package] version is "
          f"{cargo!r}; run bindings/kotlin/check-version.sh write", file=sys.stderr)
    bad = 1
sys.exit(bad)
PY
