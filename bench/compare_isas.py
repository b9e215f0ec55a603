#!/usr/bin/env python3
"""Tables the rounds bench/compare_isas.sh ran: per benchmark, each instruction set's median real
time and first rate counter (slot-forces/s where there is one) over the rounds and, given a
reference benchmark, that counter as a fraction of the reference's in the same build."""
import statistics
import sys

from rounds import load_rounds, rate_name

work, rounds, reference, marches = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]


def median_rate(runs):
    name = rate_name(runs[0])
    return statistics.median(r[name] for r in runs) if name else 0.0


results = {m: load_rounds(work, m, rounds) for m in marches}
header = ["benchmark", "counter"]
for m in marches:
    header += [f"{m} time", f"{m} rate"] + ([f"{m} ÷ reference"] if reference else [])
print("| " + " | ".join(header) + " |")
print("|" + " --- |" * len(header))
for name, runs in results[marches[0]].items():
    counter = rate_name(runs[0])
    row = [name, counter]
    for m in marches:
        mine = results[m].get(name)
        if not mine:
            row += ["", ""] + ([""] if reference else [])
            continue
        t = statistics.median(r["real_time"] for r in mine)
        rate = median_rate(mine)
        row += [f"{t:.4g} {mine[0]['time_unit']}", f"{rate:.4g}" if counter else ""]
        if reference:
            ref = results[m].get(reference)
            ref_rate = median_rate(ref) if ref else 0.0
            row.append(f"{rate / ref_rate:.3f}" if counter and ref_rate else "")
    print("| " + " | ".join(row) + " |")
