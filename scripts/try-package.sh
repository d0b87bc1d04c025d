#!/usr/bin/env bash
# Tries a package that guards code with `#if canImport(Security)` beside Keyhaven, as an app that
# depends on both would (docs/porting.md, section 5):
#   scripts/try-package.sh PACKAGE_PATH PRODUCT [MODULE] [--product Security|KeychainServices]
# Makes an app in a temporary folder that depends on PRODUCT of the package at PACKAGE_PATH (a
# checkout) and on Keyhaven's `Security` product (or KeychainServices), builds it, builds again
# after touching every Swift source of that package (now compiled with Keyhaven's modules in sight),
# and runs a SecItemAdd and SecItemCopyMatching on a throw-away keychain. MODULE is what the app
# imports (default: PRODUCT). KEYHAVEN_TRY_SCRATCH keeps the build folder between runs.
set -euo pipefail
keyhaven="$(cd "$(dirname "$0")/.." && pwd)"
usage() { echo "usage: scripts/try-package.sh PACKAGE_PATH PRODUCT [MODULE] [--product Security|KeychainServices]" >&2; exit 64; }
[ $# -ge 2 ] || usage
package="$(cd "$1" && pwd)" || usage
product="$2"; shift 2
module="$product"
if [ $# -gt 0 ] && [ "$1" != "--product" ]; then module="$1"; shift; fi
keyhavenProduct=Security
if [ $# -gt 0 ]; then
    [ "$1" = "--product" ] && [ $# -eq 2 ] || usage
    keyhavenProduct="$2"
    case "$keyhavenProduct" in Security|KeychainServices) ;; *) usage ;; esac
fi
[ -f "$package/Package.swift" ] || { echo "try-package: $package has no Package.swift" >&2; exit 66; }
app="$(mktemp -d)"
scratch="${KEYHAVEN_TRY_SCRATCH:-$app/.build}"
home="$(mktemp -d)"; runtime="$(mktemp -d)"
trap 'rm -rf "$app" "$home" "$runtime"' EXIT
mkdir -p "$app/Sources/App"
cat > "$app/Package.swift" <<EOF
// swift-tools-version:6.1
import PackageDescription
let package = Package(
    name: "TryPackage",
    dependencies: [.package(name: "keyhaven", path: "$keyhaven"), .package(name: "tried", path: "$package")],
    targets: [
        .executableTarget(name: "App", dependencies: [
            .product(name: "$keyhavenProduct", package: "keyhaven"), .product(name: "$product", package: "tried"),
        ])
    ]
)
EOF
cat > "$app/Sources/App/main.swift" <<EOF
import Foundation
import $keyhavenProduct
import $module

let item: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "try-package",
                           kSecAttrAccount as String: "app", kSecValueData as String: Data("secret".utf8)]
let added = SecItemAdd(item as CFDictionary, nil)
var result: AnyObject?
let query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "try-package",
                            kSecAttrAccount as String: "app", kSecReturnData as String: true]
let read = SecItemCopyMatching(query as CFDictionary, &result)
print("add=\(added) read=\(read) value=\((result as? Data).map { String(decoding: \$0, as: UTF8.self) } ?? "none")")
EOF
build() {
    local log; log="$(mktemp)"
    if ! swift build --package-path "$app" --scratch-path "$scratch" > "$log" 2>&1; then
        grep -E "error:" "$log" | sort -u | head -20; rm -f "$log"; return 1
    fi
    grep -E "Build complete" "$log" || true
    rm -f "$log"
}
if [ "$keyhavenProduct" != Security ]; then
    # A build folder that built Keyhaven's Security before keeps it, and canImport(Security) with it.
    rm -rf "$scratch"/*/debug/Modules/Security.* "$scratch"/*/debug/Security.build
fi
echo "try-package: $product from $package beside Keyhaven's $keyhavenProduct: clean build"
build || { echo "try-package: the clean build failed" >&2; exit 1; }
find "$package" -name '*.swift' ! -name 'Package*.swift' ! -path '*/.build*' ! -path '*/Tests/*' -exec touch {} +
echo "try-package: after touching $product's sources"
build || { echo "try-package: the build after the change failed (the package's guarded code did not compile against Keyhaven's $keyhavenProduct)" >&2; exit 1; }
output="$(KEYHAVEN_HOME="$home" XDG_RUNTIME_DIR="$runtime" KEYHAVEN_AGENT=off \
    "$(swift build --package-path "$app" --scratch-path "$scratch" --show-bin-path)/App")"
echo "$output"
[ "$output" = "add=0 read=0 value=secret" ] || { echo "try-package: unexpected output" >&2; exit 1; }
echo "try-package: built twice and stored a secret through Keyhaven"
