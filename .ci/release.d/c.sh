#!/usr/bin/env bash
# C: a versioned install prefix and a tarball of it, in $STOREFRONT_OUT/c/:
#   prefix/lib/libstorefront.so.<version>     the stripped release library (SONAME libstorefront.so.<major>)
#   prefix/lib/libstorefront.so.<major>       -> libstorefront.so.<version> (what programs load)
#   prefix/lib/libstorefront.so               -> libstorefront.so.<major>   (what -lstorefront links)
#   prefix/lib/libstorefront.a                the static library, debug sections stripped
#   prefix/include/storefront.h               the cbindgen header
#   prefix/lib/pkgconfig/storefront.pc        relocatable (prefix from ${pcfiledir})
#   storefront-c-<version>-linux-x86_64.tar.gz the prefix, to unpack into /usr/local or anywhere
#                                             (docs/c.md: the C quick start)
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${STOREFRONT_VERSION:?}" "${STOREFRONT_RELEASE_LIB:?}" "${STOREFRONT_RELEASE_STATICLIB:?}" "${STOREFRONT_OUT:?}"
major="${STOREFRONT_VERSION%%.*}"
out="$STOREFRONT_OUT/c"
prefix="$out/prefix"
rm -rf "$out"
mkdir -p "$prefix/lib/pkgconfig" "$prefix/include"

soname=$(readelf -d "$STOREFRONT_RELEASE_LIB" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
if [[ "$soname" != "libstorefront.so.$major" ]]; then
  echo "c: the release library's SONAME is '$soname', expected libstorefront.so.$major (build.rs)" >&2
  exit 1
fi
install -m 0755 "$STOREFRONT_RELEASE_LIB" "$prefix/lib/libstorefront.so.$STOREFRONT_VERSION"
ln -s "libstorefront.so.$STOREFRONT_VERSION" "$prefix/lib/libstorefront.so.$major"
ln -s "libstorefront.so.$major" "$prefix/lib/libstorefront.so"
strip --strip-debug -o "$prefix/lib/libstorefront.a" "$STOREFRONT_RELEASE_STATICLIB"
chmod 0644 "$prefix/lib/libstorefront.a"
install -m 0644 include/storefront.h "$prefix/include/storefront.h"
sed -e "s|@VERSION@|$STOREFRONT_VERSION|" include/storefront.pc.in > "$prefix/lib/pkgconfig/storefront.pc"

# lib/ and include/ only, owned by root: unpacked as root into /usr/local, it must not change the
# owner or mode of /usr/local itself (a "./" entry would).
tar -C "$prefix" --owner=0 --group=0 --numeric-owner -czf "$out/storefront-c-$STOREFRONT_VERSION-linux-x86_64.tar.gz" lib include
echo "c: $prefix (SONAME $soname) and $(basename "$out"/storefront-c-*.tar.gz)"
