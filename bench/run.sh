#!/usr/bin/env bash
# Builds the benchmarks (release preset: -O3 -march=native) and runs them into a result file.
#   bash bench/run.sh NAME [extra Google Benchmark flags, e.g. --benchmark_filter=BM_step]
# Writes bench/results/NAME.json (Google Benchmark's JSON; its context block names the CPU) and
# bench/results/NAME.md: the exact command, compiler, flags, CPU and a table of the medians.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=bench/describe.sh
source bench/describe.sh
name=${1:?usage: bash bench/run.sh NAME [benchmark flags]}
shift

cmake --workflow --preset release >/dev/null
binary=build/release/bench/simdverlet_bench
out=bench/results/$name
args=(--benchmark_out="$out.json" --benchmark_out_format=json --benchmark_repetitions=5
      --benchmark_report_aggregates_only=true "$@")
"$binary" "${args[@]}"

flags=$(grep -o '"command": "[^"]*step.cpp[^"]*"' build/release/compile_commands.json | head -1 |
        sed -e 's/"command": "//' -e 's/"$//' -e 's/ -o [^ ]*//' -e 's/ -c [^ ]*//' -e "s|$PWD/||g")
{
    echo "# Benchmark result: $name"
    echo
    # %q quotes what a shell would split or pipe (a filter's "|"), so the line can be pasted.
    echo "- command: \`bash bench/run.sh $name $(printf '%q ' "$@" | sed 's/ $//')\` → \`$binary $(printf '%q ' "${args[@]}" | sed 's/ $//')\`"
    echo "- tree: $(describe_tree)"
    echo "- compiler: \`$(describe_compiler build/release/CMakeCache.txt)\`"
    echo "- compile line: \`$flags\`"
    describe_machine
    for var in OMP_WAIT_POLICY GOMP_SPINCOUNT OMP_PROC_BIND; do
        if [[ -n ${!var+x} ]]; then echo "- environment: \`$var=${!var}\`"; fi
    done
    echo "- note: a shared, noisy machine. Compare variants within this one run, as ratios."
    echo
    python3 bench/summarize.py "$out.json"
} >"$out.md"
echo "wrote $out.json and $out.md"
