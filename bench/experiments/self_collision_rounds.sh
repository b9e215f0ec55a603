#!/usr/bin/env bash
# The self-collision stage at two commits in the same run: by default before the work on its speed
# (8eed398) and HEAD. bench/self_collision.cpp of each, with the release preset's flags, both
# timing the same 60 frames of the pile (8eed398's benchmark let Google Benchmark pick the count,
# and the pile grows contacts as it settles, so a source without the fixed count gets it here).
# The two binaries run alternately, twice each; each line gives the frame with and without the
# stage and their difference, the stage, on one and two threads.
#   bash bench/experiments/self_collision_rounds.sh [AFTER [BEFORE]]
# docs/performance.md ("Self-collision") quotes runs of it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
after=$(git rev-parse "${1:-HEAD}")
before=$(git rev-parse "${2:-8eed398}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
flags=(-std=c++20 -O3 -march=native -DNDEBUG -fopenmp -ffp-contract=off -Wno-maybe-uninitialized
       -DSIMDVERLET_HAVE_OPENMP=1 -DSIMDVERLET_HAVE_TBB=0 -Itests -Iinclude -isystem /usr/include/eigen3)
for name in before after; do
    commit=$([[ $name == before ]] && echo "$before" || echo "$after")
    mkdir "$work/$name"
    git archive "$commit" include bench tests | tar -x -C "$work/$name"
    python3 - "$work/$name/bench/self_collision.cpp" <<'EOF'
import sys
path = sys.argv[1]
text = open(path).read()
old = "    ->Args({0, 1, 110000, 1})\n    ->Unit(benchmark::kMillisecond)"
if old in text:
    open(path, "w").write(text.replace(old, "    ->Args({0, 1, 110000, 1})\n    ->Iterations(60)\n    ->Unit(benchmark::kMillisecond)"))
EOF
    (cd "$work/$name" && c++ "${flags[@]}" bench/self_collision.cpp bench/main.cpp -lbenchmark -lpthread \
        -o "$work/bench-$name")
done
# ms/frame of the four vector rows, then the stage (with - without) on one and on two threads.
run() {
    "$1" --benchmark_filter='BM_self_collision/self:./threads:./k:60000/vectorized:1' 2>/dev/null |
        grep -o 'self:[01]/threads:[12]\|ms/frame=[0-9.]*' | paste -d' ' - - | sed 's/ms\/frame=//' |
        awk '{ms[$1] = $2} END {
            printf "    1 thread: %.2f with, %.2f without, stage %.2f ms; 2 threads: %.2f with, %.2f without, stage %.2f ms\n",
                ms["self:1/threads:1"], ms["self:0/threads:1"], ms["self:1/threads:1"] - ms["self:0/threads:1"],
                ms["self:1/threads:2"], ms["self:0/threads:2"], ms["self:1/threads:2"] - ms["self:0/threads:2"] }'
}
c++ --version | head -1
grep -m1 'model name' /proc/cpuinfo
echo "before: $before, after: $after"
for round in 1 2; do
    echo "round $round"
    echo "  before:"; run "$work/bench-before"
    echo "  after:"; run "$work/bench-after"
done
