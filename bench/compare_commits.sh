#!/usr/bin/env bash
# Compares the benchmarks of another commit with this working tree in one run, on one machine:
# builds both (release preset: -O3 -march=native), then runs them alternately, ROUNDS times each,
# so that drift in the machine's load falls on both alike.
#   bash bench/compare_commits.sh BASE NAME [ROUNDS] [Google Benchmark flags, e.g. --benchmark_filter=BM_step]
# Writes bench/results/NAME.md: the command, compiler, flags, CPU, and per benchmark the median time
# of each side over its rounds with their ratio (base / this tree: above 1 means this tree is faster).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=bench/describe.sh
source bench/describe.sh
base=${1:?usage: bash bench/compare_commits.sh BASE NAME [ROUNDS] [benchmark flags]}
name=${2:?usage: bash bench/compare_commits.sh BASE NAME [ROUNDS] [benchmark flags]}
rounds=${3:-3}
shift $(($# < 3 ? $# : 3))
base_rev=$(git rev-parse --short "$base")
tree=$(mktemp -d)
trap 'git worktree remove --force "$tree" >/dev/null 2>&1 || true' EXIT
git worktree add --detach "$tree" "$base_rev" >/dev/null
(cd "$tree" && cmake --workflow --preset release >/dev/null)
cmake --workflow --preset release >/dev/null
work=$(mktemp -d)
for round in $(seq 1 "$rounds"); do
    "$tree/build/release/bench/simdverlet_bench" --benchmark_out="$work/base_$round.json" \
        --benchmark_out_format=json "$@" >/dev/null
    build/release/bench/simdverlet_bench --benchmark_out="$work/this_$round.json" \
        --benchmark_out_format=json "$@" >/dev/null
done
out=bench/results/$name.md
{
    echo "# Benchmark comparison: $name"
    echo
    echo "- command: \`bash bench/compare_commits.sh $base $name $rounds $(printf '%q ' "$@" | sed 's/ $//')\`"
    echo "- base: $base_rev; this tree: $(describe_tree)"
    echo "- compiler: \`$(describe_compiler build/release/CMakeCache.txt)\`, release preset (-O3 -march=native)"
    describe_machine
    echo "- rounds: $rounds, the two binaries alternating; each cell the median over the rounds"
    echo
    python3 bench/compare.py "$work" "$rounds"
} >"$out"
rm -rf "$work"
echo "wrote $out"
