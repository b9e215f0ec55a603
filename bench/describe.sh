# shellcheck shell=bash
# What every result file under bench/results says about where it was made, for the scripts beside
# this one to source: one Markdown list line each. Run from the repository root.

# The compiler named in CMAKE_CACHE (a build folder's CMakeCache.txt): its first version line.
describe_compiler() {
    local compiler
    compiler=$(grep -m1 '^CMAKE_CXX_COMPILER:' "$1" | cut -d= -f2)
    "$compiler" --version | head -1
}

# The commit measured, and whether the library, benchmarks or tests differed from it.
describe_tree() {
    echo "$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- include bench tests ':!bench/results' ||
        echo ' with uncommitted changes')"
}

# The CPU and how many cores the machine shows, then the time of writing (UTC).
describe_machine() {
    echo "- CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores visible"
    echo "- date: $(date -u +%Y-%m-%dT%H:%MZ)"
}
