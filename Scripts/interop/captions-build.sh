#!/usr/bin/env bash
# Builds Scripts/interop/captions-convert.swift in release mode with swiftc, outside SwiftPM
# (so it never touches .build). Prints the path of the binary. Used by Scripts/interop/captions
# and Scripts/bench/captions. Set CAPTIONS_TOOL_DIR to choose the build directory.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${CAPTIONS_TOOL_DIR:-/tmp/castprep-captions-tool}"
SWIFTC="${SWIFTC:-$(command -v swiftc || echo /opt/swift/usr/bin/swiftc)}"
mkdir -p "$BUILD"
FEATURES=(-enable-upcoming-feature ExistentialAny -enable-upcoming-feature MemberImportVisibility
          -enable-upcoming-feature InternalImportsByDefault -enable-upcoming-feature NonisolatedNonsendingByDefault)
COMMON=(-swift-version 6 -O -wmo -parse-as-library "${FEATURES[@]}")
SHIMS=(-Xcc -fmodule-map-file="$ROOT/Sources/CShims/CLibXML2/module.modulemap"
       -Xcc -fmodule-map-file="$ROOT/Sources/CShims/CFFmpeg/module.modulemap")
for flag in $(pkg-config --cflags-only-I libxml-2.0 libavformat libavcodec libavutil); do SHIMS+=(-Xcc "$flag"); done
stamp="$BUILD/.stamp"
newest=$(find "$ROOT/Sources/JSONSupport" "$ROOT/Sources/CastModel" "$ROOT/Sources/Captions" "$ROOT/Scripts/interop/captions-convert.swift" -newer "$stamp" 2>/dev/null | head -1 || true)
if [ ! -x "$BUILD/captions-convert" ] || [ ! -f "$stamp" ] || [ -n "$newest" ]; then
    for name in JSONSupport CastModel Captions; do
        echo "building $name (release)" >&2
        # shellcheck disable=SC2046
        "$SWIFTC" "${COMMON[@]}" -module-name "$name" -emit-module -emit-module-path "$BUILD/$name.swiftmodule" \
            -emit-library -static -o "$BUILD/lib$name.a" -I "$BUILD" "${SHIMS[@]}" \
            $(find "$ROOT/Sources/$name" -name '*.swift' | sort)
    done
    echo "linking captions-convert" >&2
    # shellcheck disable=SC2046
    "$SWIFTC" "${COMMON[@]}" -module-name CaptionsConvert "${SHIMS[@]}" -I "$BUILD" -L "$BUILD" \
        "$ROOT/Scripts/interop/captions-convert.swift" -lCaptions -lCastModel -lJSONSupport \
        $(pkg-config --libs libxml-2.0) -lswiftDispatch -ldispatch -lBlocksRuntime -o "$BUILD/captions-convert"
    touch "$stamp"
fi
echo "$BUILD/captions-convert"
