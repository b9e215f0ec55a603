#!/usr/bin/env bash
# A dropped experiment, kept reproducible: the mesh collider's "rest cache"
# (mesh_rest_cache.patch): a lane group that tested its whole list remembers where its lanes were
# and the triangles within 1.25 x the reach of them, and while every lane stays within half the
# difference of where it was, it tests those triangles alone (the same bits: nothing else can come
# within reach). Builds the benchmark from the commit that added the patch, with and without it,
# with the release preset's flags, and runs the two binaries alternately, three times each:
#   bash bench/experiments/mesh_rest_cache.sh
# docs/performance.md ("Triangle-mesh colliders") quotes a run of it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
base=$(git log -1 --format=%H -- bench/experiments/mesh_rest_cache.patch)
work=$(mktemp -d)
trap 'git worktree remove --force "$work/base" >/dev/null 2>&1 || true;
      git worktree remove --force "$work/cache" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
flags=(-std=c++20 -O3 -march=native -DNDEBUG -fopenmp -ffp-contract=off -Wno-maybe-uninitialized
       -DSIMDVERLET_HAVE_OPENMP=1 -DSIMDVERLET_HAVE_TBB=0 -Itests -isystem /usr/include/eigen3)
for name in base cache; do
    git worktree add -q --detach "$work/$name" "$base"
    if [[ $name == cache ]]; then
        git -C "$work/$name" apply "$PWD/bench/experiments/mesh_rest_cache.patch"
    fi
    (cd "$work/$name" && c++ "${flags[@]}" -Iinclude bench/mesh_collider.cpp bench/main.cpp -lbenchmark -lpthread \
        -o "$work/bench-$name")
done
run() { "$@" --benchmark_filter='BM_mesh_collider_pass/vectorized:1|BM_mesh_collider/mesh:./threads:1/vectorized:1' \
        --benchmark_repetitions=3 --benchmark_report_aggregates_only=true 2>/dev/null | grep median |
        awk '{print "    " $1, $2, $3}'; }
c++ --version | head -1
grep -m1 'model name' /proc/cpuinfo
echo "base commit $base"
for round in 1 2 3; do
    echo "round $round"
    echo "  committed:"; run "$work/bench-base"
    echo "  with the rest cache:"; run "$work/bench-cache"
done
