#!/usr/bin/env bash
# Fixtures/CanImportSecurity: an app with Keyhaven's `Security` product and a library that guards
# keychain code with `#if canImport(Security)` without depending on Keyhaven. Builds it, changes the
# library's source and builds again (that build compiles the library's `import Security` with
# `Security` already built: it must need none of Keyhaven's C modules), then runs the app on a
# throw-away keychain. swift-certificates, which guards its SecCertificate conversions the same way,
# is then compiled again with `Security` built. The dependencies' builds are kept between runs in
# KEYHAVEN_FIXTURE_SCRATCH (else ~/.cache/keyhaven/fixture-can-import); the fixture's own
# targets are always built anew.
set -euo pipefail
cd "$(dirname "$0")/.."
fixture=Fixtures/CanImportSecurity
scratch="${KEYHAVEN_FIXTURE_SCRATCH:-${XDG_CACHE_HOME:-$HOME/.cache}/keyhaven/fixture-can-import}"
mkdir -p "$scratch"
build() {
    local log; log="$(mktemp)"
    if ! swift build --package-path "$fixture" --scratch-path "$scratch" > "$log" 2>&1; then cat "$log"; rm -f "$log"; return 1; fi
    { grep -Eo "Compiling (App|Guarded|X509) " "$log" | sort | uniq -c; grep -E "Build complete" "$log"; } || true
    rm -f "$log"
}
for products in "$scratch"/*/debug; do
    [ -d "$products" ] || continue
    # Security too: a dependency compiled again while it exists sees it (docs/porting.md, section 5).
    rm -rf "$products"/{App,Guarded,Security}.build "$products"/Modules/{App,Guarded,Security}.*
    # SwiftPM writes a target's plan files (output-file-map.json) only when it plans anew.
    rm -f "$products/description.json"
done
rm -f "$scratch/debug.yaml"
echo "fixture: clean build"
build
touch "$fixture/Guarded/Sources/Guarded/TokenVault.swift"
echo "fixture: after a change to the guarded library"
build
# swift-certificates compiled with `Security` in sight: its guarded branch (SecCertificate to and
# from Certificate) must build against Keyhaven's, and no module of Keyhaven's may need X509 first.
x509="$(find "$scratch/checkouts" -path '*/Sources/X509/Certificate.swift' | head -1)"
[ -n "$x509" ] || { echo "fixture: swift-certificates' Certificate.swift not found" >&2; exit 1; }
touch "$x509"
echo "fixture: after a change to swift-certificates"
build
bin="$(swift build --package-path "$fixture" --scratch-path "$scratch" --show-bin-path)"
[ "$(nm "$bin/X509.build/Certificate.swift.o" | swift demangle --simplified | grep -c 'SecCertificate.makeWithCertificate')" -gt 0 ] || { echo "fixture: X509 was not compiled with its canImport(Security) branch" >&2; exit 1; }
echo "fixture: swift-certificates compiled its canImport(Security) branch against Keyhaven's Security"
app="$(swift build --package-path "$fixture" --scratch-path "$scratch" --show-bin-path)/App"
home="$(mktemp -d)"; runtime="$(mktemp -d)"
trap 'rm -rf "$home" "$runtime"' EXIT
output="$(KEYHAVEN_HOME="$home" XDG_RUNTIME_DIR="$runtime" KEYHAVEN_AGENT=off "$app")"
echo "$output"
[ "$output" = "$(printf 'guarded keychain=true store=0 read=fixture-token\ndirect=0')" ] || { echo "fixture: unexpected output" >&2; exit 1; }
echo "fixture: the guarded library compiled against Security and stored through it"
