#!/usr/bin/env bash
# Release step (run by .ci/release): the Android library, an AAR with
#   AndroidManifest.xml          package dev.storefront, minSdk, INTERNET permission
#   classes.jar                  the Kotlin bindings (bindings/kotlin/src/main) compiled for the JVM
#                                (bytecode 17: Android Gradle Plugin 8 desugars it), no native code
#   jni/<abi>/libstorefront.so   one library per ABI given in STOREFRONT_ANDROID_LIBS
#   R.txt                        empty (no resources)
#   proguard.txt                 consumer R8 rules: JNA and uniffi's classes are reached reflectively
# zipped to OUT/android/storefront-VERSION.aar and checked with `unzip -l`.
#
#   STOREFRONT_ANDROID_LIBS="arm64-v8a=/path/arm64-v8a/libstorefront.so x86_64=/path/x86_64/libstorefront.so ..."
#   STOREFRONT_ANDROID_MIN_SDK=21    (the --platform the libraries were built for; default 21)
# Build those libraries on a machine with the Android NDK (bindings/kotlin/README.md, "Android").
#
# Without STOREFRONT_ANDROID_LIBS (this CI has no NDK, and nothing here can cross-compile for
# Android) the step still assembles and checks the layout, with the host's Linux x86-64 release
# library in jni/x86_64/ as a STAND-IN: it is a glibc library and does not load on Android. That
# AAR is written as OUT/android/storefront-VERSION-STAND-IN.aar, never under the release name.
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${STOREFRONT_VERSION:?set by .ci/release}" "${STOREFRONT_RELEASE_LIB:?set by .ci/release}" "${STOREFRONT_OUT:?set by .ci/release}"
for tool in java mvn zip unzip python3; do
  command -v "$tool" >/dev/null || { echo "android: $tool is required" >&2; exit 1; }
done
# binutils' readelf, or the NDK's llvm-readelf (toolchains/llvm/prebuilt/*/bin) on a Mac.
readelf=$(command -v readelf || command -v llvm-readelf || true)
[[ -n "$readelf" ]] || { echo "android: readelf or llvm-readelf is required" >&2; exit 1; }
version="$STOREFRONT_VERSION"
min_sdk="${STOREFRONT_ANDROID_MIN_SDK:-21}"
mvn_plain() { mvn -B -ntp -Dstyle.color=never "$@" 2>&1 | sed 's/\x1b\[[0-9;]*m//g'; }

out="$STOREFRONT_OUT/android"
rm -rf "$out"
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
layout="$work/aar"
mkdir -p "$layout"

# --- the native libraries --------------------------------------------------------------------
stand_in=0
specs=(${STOREFRONT_ANDROID_LIBS:-})
if ((${#specs[@]} == 0)); then
  stand_in=1
  specs=("x86_64=$STOREFRONT_RELEASE_LIB")
  echo "android: STAND-IN. No STOREFRONT_ANDROID_LIBS given, and this machine has no Android NDK:"
  echo "android:   jni/x86_64/libstorefront.so is the host's Linux x86-64 (glibc) release library,"
  echo "android:   which does NOT load on Android. This only checks the AAR layout; do not ship it."
fi

# e_machine of each ABI (ELF header offset 18). (No associative array: macOS ships bash 3.2.)
machine_of() {
  case "$1" in
    arm64-v8a) echo 183 ;; armeabi-v7a) echo 40 ;; x86_64) echo 62 ;; x86) echo 3 ;; *) echo "" ;;
  esac
}
abis=()
for spec in "${specs[@]}"; do
  abi="${spec%%=*}"
  lib="${spec#*=}"
  [[ "$spec" == *=* && -f "$lib" ]] || { echo "android: STOREFRONT_ANDROID_LIBS entry '$spec' is not ABI=EXISTING_FILE" >&2; exit 1; }
  expected_machine=$(machine_of "$abi")
  [[ -n "$expected_machine" ]] || { echo "android: unknown ABI '$abi' (arm64-v8a, armeabi-v7a, x86_64, x86)" >&2; exit 1; }
  got=$(python3 -c '
import struct, sys
head = open(sys.argv[1], "rb").read(20)
if head[:4] != b"\x7fELF": print("not-elf"); sys.exit()
print(struct.unpack("<H", head[18:20])[0])' "$lib")
  [[ "$got" == "$expected_machine" ]] || { echo "android: $lib is not an ELF library for $abi (e_machine $got, expected $expected_machine)" >&2; exit 1; }
  mkdir -p "$layout/jni/$abi"
  cp "$lib" "$layout/jni/$abi/libstorefront.so"
  lib="$layout/jni/$abi/libstorefront.so"
  abis+=("$abi")

  # Android's libc (bionic) has no GLIBC_* symbol versions; the JNI entry point of
  # Storefront.client(config, context) is compiled for target_os = "android" only; 64-bit ABIs
  # need 16 KB-aligned LOAD segments (Android 15+ devices with 16 KB pages, Google Play).
  glibc=$("$readelf" -V --wide "$lib" 2>/dev/null | grep -c 'GLIBC_' || true)
  jni=$("$readelf" --dyn-syms --wide "$lib" | grep -c 'Java_dev_storefront_AndroidPlatformVerifier_nativeInit' || true)
  align=$("$readelf" -lW "$lib" | awk '$1 == "LOAD" { print $NF }' | sort -u | paste -sd, -)
  problems=()
  [[ "$glibc" == 0 ]] || problems+=(" links against glibc (GLIBC_ symbol versions)")
  [[ "$jni" != 0 ]] || problems+=(" no JNI entry Java_dev_storefront_AndroidPlatformVerifier_nativeInit")
  if [[ "$abi" == arm64-v8a || "$abi" == x86_64 ]]; then
    for a in ${align//,/ }; do
      (( a >= 0x4000 )) || { problems+=(" LOAD segments aligned to $align, not 16 KB"); break; }
    done
  fi
  if ((stand_in)); then
    (IFS=';'; echo "android: stand-in jni/$abi/libstorefront.so, as expected of a host library:${problems[*]:- none}")
  elif ((${#problems[@]})); then
    printf 'android: %s (%s) is not a usable Android library:\n' "$spec" "$abi" >&2
    printf '  -%s\n' "${problems[@]}" >&2
    exit 1
  else
    echo "android: jni/$abi/libstorefront.so: no glibc symbol versions, JNI entry present, LOAD align $align"
  fi
done

# --- classes.jar: the Kotlin bindings without any native library ------------------------------
echo "android: compiling the Kotlin bindings for classes.jar"
mkdir -p "$work/none"
mvn_plain -q -f bindings/kotlin/pom.xml compile \
  -Dstorefront.native.dir="$work/none" \
  -Dstorefront.native.resources="$work/none" \
  -Dstorefront.build.dir="$work/build"
classes="$work/build/classes"
if find "$classes" -name '*.so' -o -name '*.dylib' -o -name '*.dll' | grep -q .; then
  echo "android: native libraries among the compiled classes" >&2; exit 1
fi
(cd "$classes" && zip -qrX "$layout/classes.jar" .)

# --- manifest, R.txt, consumer rules, zip -----------------------------------------------------
label=""
((stand_in)) && label="
  STAND-IN AAR: jni/x86_64/libstorefront.so is a Linux (glibc) library for checking the layout
  only; it does not load on Android. Build the real libraries with the NDK (bindings/kotlin/README.md)."
cat >"$layout/AndroidManifest.xml" <<XML
<?xml version="1.0" encoding="utf-8"?>
<!-- storefront $version: Kotlin bindings of the storefront SDK.$label -->
<manifest xmlns:android="http://schemas.android.com/apk/res/android"
    package="dev.storefront">
    <uses-sdk android:minSdkVersion="$min_sdk" />
    <uses-permission android:name="android.permission.INTERNET" />
</manifest>
XML
: >"$layout/R.txt"
cat >"$layout/proguard.txt" <<'RULES'
# JNA and the uniffi-generated bindings are reached through reflection and JNI.
-dontwarn java.awt.**
-keep class com.sun.jna.** { *; }
-keep class * implements com.sun.jna.** { *; }
-keep class dev.storefront.** { *; }
RULES

if ((stand_in)); then
  aar="$out/storefront-$version-STAND-IN.aar"
  cat >"$out/STAND-IN.txt" <<TXT
$(basename "$aar") is NOT an Android library: jni/x86_64/libstorefront.so inside is the Linux
x86-64 (glibc) release library of the machine that ran .ci/release, which had no Android NDK.
It exists to check the AAR layout. For a real AAR, build the libraries with the NDK and run
  STOREFRONT_ANDROID_LIBS="arm64-v8a=... armeabi-v7a=... x86_64=..." .ci/release
(bindings/kotlin/README.md, "Android").
TXT
else
  aar="$out/storefront-$version.aar"
fi
(cd "$layout" && zip -qrX "$aar" AndroidManifest.xml classes.jar R.txt proguard.txt jni)

# --- check the layout ---------------------------------------------------------------------------
listing=$(unzip -l "$aar")
echo "$listing"
expected=(AndroidManifest.xml classes.jar R.txt)
for abi in "${abis[@]}"; do expected+=("jni/$abi/libstorefront.so"); done
for entry in "${expected[@]}"; do
  grep -qE " $entry\$" <<<"$listing" || { echo "android: $entry missing from $aar" >&2; exit 1; }
done
unzip -p "$aar" R.txt | cmp -s - /dev/null || { echo "android: R.txt is not empty" >&2; exit 1; }
classes_listing=$(unzip -p "$aar" classes.jar >"$work/classes-check.jar" && unzip -l "$work/classes-check.jar")
for class in dev/storefront/Client.class dev/storefront/Storefront.class dev/storefront/AndroidPlatformVerifier.class; do
  grep -qE " $class\$" <<<"$classes_listing" || { echo "android: $class missing from classes.jar" >&2; exit 1; }
done
if grep -qE '\.(so|dylib|dll)$' <<<"$classes_listing"; then
  echo "android: classes.jar carries a native library" >&2; exit 1
fi
echo "android: $aar: $(wc -c <"$aar" | tr -d ' ') bytes, ABIs: ${abis[*]}"
if ((stand_in)); then
  echo "android: STAND-IN layout check passed; no Android library was built (no NDK here). See $out/STAND-IN.txt"
fi
