"""The rounds a comparison script ran: each round's Google Benchmark JSON, by benchmark name."""
import json


def load_rounds(work, side, rounds):
    """Every iteration run of rounds 1..rounds of `side` ({work}/{side}_{round}.json), by name."""
    runs = {}
    for r in range(1, rounds + 1):
        for b in json.load(open(f"{work}/{side}_{r}.json"))["benchmarks"]:
            if b.get("run_type", "iteration") == "iteration":
                runs.setdefault(b["name"], []).append(b)
    return runs
