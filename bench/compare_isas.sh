#!/usr/bin/env bash
# Compares one benchmark run across instruction sets on one machine: builds the benchmarks once per
# -march value (release preset otherwise: -O3), then runs the builds alternately, ROUNDS times each,
# so that drift in the machine's load falls on all alike.
#   bash bench/compare_isas.sh NAME "MARCH..." [ROUNDS] [Google Benchmark flags]
#   e.g. bash bench/compare_isas.sh mesh_cloth_isas "x86-64 x86-64-v3 native" 3 --benchmark_filter=BM_mesh_cloth
# x86-64 is SSE2, x86-64-v3 AVX2 with FMA, native the build machine's widest. With REFERENCE set to
# a benchmark's full name, each rate counter is also given as a fraction of that benchmark's.
# Writes bench/results/NAME.md: the command, compiler, CPU, and per benchmark and instruction set
# the median time and rate counter over the rounds.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=bench/describe.sh
source bench/describe.sh
usage='usage: bash bench/compare_isas.sh NAME "MARCH..." [ROUNDS] [benchmark flags]'
name=${1:?$usage}
read -r -a marches <<<"${2:?$usage}"
rounds=${3:-3}
shift $(($# < 3 ? $# : 3))
for march in "${marches[@]}"; do
    cmake --preset release -B "build/release-$march" -DSIMDVERLET_BENCH_MARCH="$march" >/dev/null
    cmake --build "build/release-$march" --target simdverlet_bench -j "$(nproc)" >/dev/null
done
work=$(mktemp -d)
for round in $(seq 1 "$rounds"); do
    for march in "${marches[@]}"; do
        "build/release-$march/bench/simdverlet_bench" --benchmark_out="$work/${march}_$round.json" \
            --benchmark_out_format=json "$@" >/dev/null
    done
done
out=bench/results/$name.md
{
    echo "# Benchmark comparison across instruction sets: $name"
    echo
    echo "- command: \`$([[ -n ${REFERENCE:-} ]] && printf 'REFERENCE=%q ' "$REFERENCE")bash bench/compare_isas.sh $name $(printf '%q' "${marches[*]}") $rounds $(printf '%q ' "$@" | sed 's/ $//')\`"
    echo "- tree: $(describe_tree)"
    echo "- compiler: \`$(describe_compiler "build/release-${marches[0]}/CMakeCache.txt")\`, release preset (-O3) with -march= each column's value"
    describe_machine
    echo "- rounds: $rounds, the builds alternating; each cell the median over the rounds"
    echo
    python3 bench/compare_isas.py "$work" "$rounds" "${REFERENCE:-}" "${marches[@]}"
} >"$out"
echo "wrote $out"
