#!/usr/bin/env bash
# Builds Scripts/interop/captions-convert.swift in release mode with swiftc, outside SwiftPM
# (so it never touches .build). Prints the path of the binary. Used by Scripts/interop/captions
# and Scripts/bench/captions. Set CAPTIONS_TOOL_DIR to choose the build directory.
#
# The modules it needs, and theirs, come from Package.swift through the fuzz scripts'
# build_harness (Scripts/fuzz/harness.sh), compiled here optimised and without sanitizers.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${CAPTIONS_TOOL_DIR:-/tmp/castprep-captions-tool}"
mkdir -p "$BUILD"
# shellcheck source=Scripts/fuzz/harness.sh
source "$ROOT/Scripts/fuzz/harness.sh"
COMMON=(-swift-version 6 -O -wmo -parse-as-library "${FEATURES[@]}")
binary="$BUILD/captions-convert"
if [ ! -x "$binary" ] || [ -n "$(find "$ROOT/Sources" "$ROOT/Package.swift" "$ROOT/Scripts/interop/captions-convert.swift" \
    -newer "$binary" -print -quit)" ]; then
    build_harness CaptionsConvert Scripts/interop/captions-convert.swift "$binary" Captions >&2
fi
echo "$binary"
