# Sourced by the Scripts/fuzz/* scripts: builds a libFuzzer harness with the modules it needs.
#
#   build_harness HarnessModule Scripts/fuzz/Harness.swift "$BUILD/harness" CastChannel [-- extra link flags]
#
# The modules are the ones named and everything they depend on, in dependency order, read
# from Package.swift (`swift package dump-package`), so a module that gains a dependency does
# not break the fuzz builds. Each is compiled with swiftc -sanitize=fuzzer,address outside
# SwiftPM (.build is untouched); the C shims they use get their module maps and pkg-config
# flags. A module whose library is newer than its sources (and than every module rebuilt before
# it) is not compiled again. FUZZ_MODULES_DIR lets several harnesses share the compiled
# modules (default: each harness's own $BUILD); FUZZ_NO_BUILD reuses the last build as it is.

SWIFTC="${SWIFTC:-$(command -v swiftc || echo /opt/swift/usr/bin/swiftc)}"
FEATURES=(-enable-upcoming-feature ExistentialAny -enable-upcoming-feature MemberImportVisibility
          -enable-upcoming-feature InternalImportsByDefault -enable-upcoming-feature NonisolatedNonsendingByDefault)
# libxml2's header folder, as Package.swift puts it on every target's include path (CLibXML2.h
# loads the library at run time, so it has no pkg-config name).
# One package name for every module, as SwiftPM gives them, so that `package` declarations
# (CastModel's OutOfLineFields, used by Catalog) are visible across them.
COMMON=(-swift-version 6 -O -g -sanitize=fuzzer,address -parse-as-library "${FEATURES[@]}" -package-name castprep
        -Xcc -I/usr/include/libxml2)

# Prints "swift NAME PATH" and "system NAME PATH PKGCONFIG" lines for the modules named and their
# dependencies, dependencies first.
fuzz_modules() {
    (cd "$ROOT" && swift package --scratch-path "$BUILD/package" dump-package) | python3 -c '
import json, sys
package = json.load(sys.stdin)
targets = {t["name"]: t for t in package["targets"]}
def names(target):
    for dependency in target.get("dependencies", []):
        for kind in ("byName", "target"):
            if kind in dependency:
                yield dependency[kind][0]
order, seen = [], set()
def visit(name):
    if name in seen or name not in targets:
        return
    seen.add(name)
    for dependency in names(targets[name]):
        visit(dependency)
    order.append(name)
for name in sys.argv[1:]:
    visit(name)
for name in order:
    target = targets[name]
    path = target.get("path") or "Sources/" + name
    if target["type"] == "system":
        print("system", name, path, target.get("pkgConfig") or "-")
    else:
        print("swift", name, path)
' "$@"
}

build_harness() {
    local harness="$1" source="$2" output="$3"; shift 3
    local modules=() extra=()
    while [ $# -gt 0 ]; do
        if [ "$1" = "--" ]; then shift; extra=("$@"); break; fi
        modules+=("$1"); shift
    done
    [ -n "${FUZZ_NO_BUILD:-}" ] && return 0
    local shims=() libraries=() swift_modules=() kind name path pkg flag
    while read -r kind name path pkg; do
        if [ "$kind" = system ]; then
            shims+=(-Xcc -fmodule-map-file="$ROOT/$path/module.modulemap")
            if [ "$pkg" != - ]; then
                for flag in $(pkg-config --cflags-only-I "$pkg"); do shims+=(-Xcc "$flag"); done
                # shellcheck disable=SC2207
                libraries+=($(pkg-config --libs "$pkg"))
            fi
        else
            swift_modules+=("$name:$path")
        fi
    done < <(fuzz_modules "${modules[@]}")
    local modules_dir="${FUZZ_MODULES_DIR:-$BUILD}" entry links=() rebuilt=""
    mkdir -p "$modules_dir"
    for entry in "${swift_modules[@]}"; do
        name="${entry%%:*}"; path="${entry#*:}"
        links=("-l$name" "${links[@]}")
        if [ -z "$rebuilt" ] && [ -f "$modules_dir/lib$name.a" ] \
            && [ -z "$(find "$ROOT/$path" -name '*.swift' -newer "$modules_dir/lib$name.a" -print -quit)" ]; then
            echo "up to date: $name" >&2
            continue
        fi
        rebuilt=1
        echo "building $name" >&2
        # shellcheck disable=SC2046
        "$SWIFTC" "${COMMON[@]}" -enable-testing -module-name "$name" -emit-module \
            -emit-module-path "$modules_dir/$name.swiftmodule" -emit-library -static -o "$modules_dir/lib$name.a" \
            -I "$modules_dir" "${shims[@]}" $(find "$ROOT/$path" -name '*.swift' | sort)
    done
    echo "linking harness" >&2
    "$SWIFTC" "${COMMON[@]}" -module-name "$harness" "${shims[@]}" -I "$modules_dir" -L "$modules_dir" "$ROOT/$source" \
        "${links[@]}" "${libraries[@]}" "${extra[@]}" -lFoundation -lFoundationEssentials -lswiftGlibc -lswiftSynchronization -lswiftDispatch -ldispatch \
        -lBlocksRuntime -o "$output" 2> "$BUILD/link.log" || { cat "$BUILD/link.log" >&2; return 1; }
}
