#!/usr/bin/env bash
# Fails, listing the files, when any C++ source under include/, tests/, bench/ or examples/ is not
# formatted as .clang-format says (Debian's clang-format, version 14). `--fix` reformats them.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

format=clang-format
command -v "$format" >/dev/null 2>&1 || format=clang-format-14
if ! command -v "$format" >/dev/null 2>&1; then
    echo "check-format: clang-format is not installed (bash scripts/install-deps.sh installs it)" >&2
    exit 1
fi

mapfile -t files < <(git ls-files -- 'include/*.hpp' 'tests/*.hpp' 'tests/*.cpp' 'bench/*.cpp' 'bench/*.hpp' \
    'examples/*.cpp' 'examples/*.hpp' 'python/*.cpp' 'python/*.hpp' 'compat/*.hpp')
if [ "${1:-}" = "--fix" ]; then
    "$format" -i --style=file "${files[@]}"
    exit 0
fi
unformatted=()
for f in "${files[@]}"; do
    "$format" --style=file --dry-run --Werror "$f" >/dev/null 2>&1 || unformatted+=("$f")
done
if [ "${#unformatted[@]}" -gt 0 ]; then
    echo "check-format: ${#unformatted[@]} file(s) differ from .clang-format ($("$format" --version)):" >&2
    printf '  %s\n' "${unformatted[@]}" >&2
    echo "check-format: run 'bash scripts/check-format.sh --fix' to reformat them" >&2
    exit 1
fi
echo "check-format: ${#files[@]} files formatted as .clang-format says"
