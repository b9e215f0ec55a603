#!/usr/bin/env bash
# Whether the memory system slows single-thread runs when every core runs one: times the filtered
# benchmarks in one process alone, then in as many processes at once as the machine has cores,
# alternating ROUNDS times so that drift in the machine's load falls on both alike.
#   bash bench/concurrent_copies.sh NAME [ROUNDS] [Google Benchmark flags, e.g. --benchmark_filter=...]
# Writes bench/results/NAME.md: the command, compiler, CPU, and per benchmark the median time alone,
# the median over every copy run side by side, and their ratio (near 1: the copies do not slow
# each other; above 1: they share something, the memory bandwidth or a cache).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=bench/describe.sh
source bench/describe.sh
name=${1:?usage: bash bench/concurrent_copies.sh NAME [ROUNDS] [benchmark flags]}
rounds=${2:-3}
shift $(($# < 2 ? $# : 2))
cmake --workflow --preset release >/dev/null
binary=build/release/bench/simdverlet_bench
copies=$(nproc)
work=$(mktemp -d)
for round in $(seq 1 "$rounds"); do
    "$binary" --benchmark_out="$work/alone_$round.json" --benchmark_out_format=json "$@" >/dev/null
    for copy in $(seq 1 "$copies"); do
        "$binary" --benchmark_out="$work/side_${round}_$copy.json" --benchmark_out_format=json "$@" >/dev/null &
    done
    wait
done
out=bench/results/$name.md
{
    echo "# Concurrent copies: $name"
    echo
    echo "- command: \`bash bench/concurrent_copies.sh $name $rounds $(printf '%q ' "$@" | sed 's/ $//')\`"
    echo "- tree: $(describe_tree)"
    echo "- compiler: \`$(describe_compiler build/release/CMakeCache.txt)\`, release preset (-O3 -march=native)"
    describe_machine
    echo "- rounds: $rounds; each round one process alone, then $copies processes at once"
    echo
    python3 - "$work" <<'EOF'
import glob, json, statistics, sys

def times(pattern):
    runs = {}
    for path in sorted(glob.glob(pattern)):
        for b in json.load(open(path))["benchmarks"]:
            if b.get("run_type", "iteration") == "iteration":
                runs.setdefault(b["name"], []).append((b["real_time"], b["time_unit"]))
    return runs

work = sys.argv[1]
alone, side = times(f"{work}/alone_*.json"), times(f"{work}/side_*.json")
print("| benchmark | alone | side by side | side by side / alone |")
print("| --- | --- | --- | --- |")
for name, t in alone.items():
    unit = t[0][1]
    a = statistics.median(x for x, _ in t)
    s = statistics.median(x for x, _ in side[name])
    print(f"| {name} | {a:.4g} {unit} | {s:.4g} {unit} | {s / a:.3f} |")
EOF
} >"$out"
echo "wrote $out"
