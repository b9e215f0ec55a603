#!/usr/bin/env bash
# A dropped experiment, kept reproducible: the mesh collider's lane groups gathered in Z-order
# (mesh_zorder_groups.patch, against commit 021e16d) against the committed collider, which loads
# 16 consecutive particles (a row segment). Builds BM_mesh_collider_pass alone twice, with the
# release preset's flags, and runs the two binaries alternately, three times each:
#   bash bench/experiments/mesh_zorder_groups.sh
# The patched binary runs twice a round: Z-order groups, then (SIMDVERLET_EXPERIMENT_ROWS=1) the
# same gathers over the particles in index order, which separates the gathers' cost from the
# groups' shape. docs/performance.md ("Triangle-mesh colliders") quotes a run of it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
work=$(mktemp -d)
trap 'git worktree remove --force "$work/tree" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git worktree add -q --detach "$work/tree" 021e16d
git -C "$work/tree" apply "$PWD/bench/experiments/mesh_zorder_groups.patch"
flags=(-std=c++20 -O3 -march=native -DNDEBUG -fopenmp -ffp-contract=off -Wno-maybe-uninitialized
       -DSIMDVERLET_HAVE_OPENMP=1 -DSIMDVERLET_HAVE_TBB=0 -Itests -isystem /usr/include/eigen3)
for variant in rows:"$work/tree-base" zorder:"$work/tree"; do
    name=${variant%%:*}
    root=${variant#*:}
    if [[ $name == rows ]]; then
        git worktree add -q --detach "$root" 021e16d
    fi
    (cd "$root" && c++ "${flags[@]}" -Iinclude bench/mesh_collider.cpp bench/main.cpp -lbenchmark -lpthread \
        -o "$work/$name")
    if [[ $name == rows ]]; then git worktree remove --force "$root"; fi
done
run() { "$@" --benchmark_filter='BM_mesh_collider_pass/vectorized:1' --benchmark_repetitions=3 \
        --benchmark_report_aggregates_only=true 2>/dev/null | grep median; }
c++ --version | head -1
grep -m1 'model name' /proc/cpuinfo
for round in 1 2 3; do
    echo "round $round"
    echo -n "  committed, row segments:      "; run "$work/rows"
    echo -n "  patched, Z-order groups:      "; run "$work/zorder"
    echo -n "  patched, gathered row order:  "; SIMDVERLET_EXPERIMENT_ROWS=1 run "$work/zorder"
done
