#!/usr/bin/env python3
"""Tables the rounds bench/compare_commits.sh ran: per benchmark, the median real time of the base
and of this tree over the rounds, their ratio, and the same for every rate counter (/s)."""
import statistics
import sys

from rounds import load_rounds, rate_name

work, rounds = sys.argv[1], int(sys.argv[2])
base, this = load_rounds(work, "base", rounds), load_rounds(work, "this", rounds)
print("| benchmark | base time | this time | base / this | counter | base | this | this / base |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
for name, runs in this.items():
    if name not in base:
        print(f"| {name} | (new) | {statistics.median(r['real_time'] for r in runs):.4g} {runs[0]['time_unit']} | | | | | |")
        continue
    bt = statistics.median(r["real_time"] for r in base[name])
    tt = statistics.median(r["real_time"] for r in runs)
    first = rate_name(runs[0])
    bc = statistics.median(r[first] for r in base[name]) if first else 0
    tc = statistics.median(r[first] for r in runs) if first else 0
    counter = f"{first} | {bc:.4g} | {tc:.4g} | {tc / bc:.3f}" if first else " | | | "
    print(f"| {name} | {bt:.4g} {runs[0]['time_unit']} | {tt:.4g} {runs[0]['time_unit']} | {bt / tt:.3f} | {counter} |")
