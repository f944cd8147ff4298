#!/usr/bin/env python3
"""Re-run the MO-RCGP defaults check of issue 21 ("Defaults that work") with the trustgp CLI.

Every option not named here is at its default. Prints per-seed and mean test RMSE (original
units) and fit seconds, as Markdown, and with --check exits 1 unless, on the target scenario,
MO-RCGP's mean heating RMSE is at most half of MOGP's, its mean cooling RMSE within 10% of
MOGP's and its mean fit under 1 s.

    cargo build --release -p trustgp-cli
    python3 results/mo_rcgp_defaults.py --check                 # the target, seeds 0-2
    python3 results/mo_rcgp_defaults.py --suite energy --seeds 0,1,2,3,4
    python3 results/mo_rcgp_defaults.py --suite jura --seeds 0,1,2,3,4
"""
import argparse
import json
import resource
import statistics
import subprocess
import sys

ENERGY = "../shared/data/uci_energy_efficiency_enb2012/ENB2012_data.csv"
JURA = "../shared/data/multioutput_jura_heavy_metals/jura_pred_259.csv"


def evaluate(binary, data, targets, model, seed, extra):
    cmd = [binary, "evaluate", "--data", data, "--target", ",".join(targets),
           "--model", model, "--test-fraction", "0.25", "--seed", str(seed)] + extra
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    j = json.loads(out[out.index("{"):])
    rmse = {m["target"]: m["rmse"] for m in j["metrics_per_output"]}
    evals = sum(s.get("evaluations", s.get("evals", 0)) for s in j.get("starts", []))
    return [rmse[t] for t in targets], j["fit_seconds"], evals, cpu, " ".join(cmd[1:])


def table(binary, title, data, targets, extra, seeds):
    """Per-seed rows and means for MOGP and MO-RCGP; returns {model: (mean rmse list, mean s)}."""
    print(f"\n### {title}\n")
    print("| model | seed | " + " | ".join(f"{t} RMSE" for t in targets) + " | fit s | evals | process CPU s |")
    print("|---|---|" + "---|" * len(targets) + "---|---|---|")
    means = {}
    for model in ["mogp", "mo-rcgp"]:
        rows = []
        for s in seeds:
            r, sec, ev, cpu, cmd = evaluate(binary, data, targets, model, s, extra)
            rows.append((r, sec, ev, cpu))
            print(f"| {model} | {s} | " + " | ".join(f"{v:.3f}" for v in r) + f" | {sec:.2f} | {ev} | {cpu:.2f} |")
        m = [statistics.mean(r[0][i] for r in rows) for i in range(len(targets))]
        sec = statistics.mean(r[1] for r in rows)
        ev = statistics.mean(r[2] for r in rows)
        cpu = statistics.mean(r[3] for r in rows)
        print(f"| **{model} mean** | | " + " | ".join(f"**{v:.3f}**" for v in m)
              + f" | **{sec:.2f}** | {ev:.1f} | {cpu:.2f} |")
        means[model] = (m, sec)
    with open("/proc/loadavg") as f:
        load = f.read().split()[:3]
    print(f"\nCommand (last seed): `trustgp {cmd}`; load average after: {' '.join(load)}")
    return means


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", default="target/release/trustgp")
    p.add_argument("--seeds", default="0,1,2")
    p.add_argument("--suite", choices=["target", "energy", "jura"], default="target")
    p.add_argument("--check", action="store_true")
    a = p.parse_args()
    seeds = [int(s) for s in a.seeds.split(",")]
    energy = ["Y1_heating_load", "Y2_cooling_load"]
    if a.suite == "target":
        m = table(a.bin, "Target: uniform:0.1:Y1_heating_load (default protocol)", ENERGY, energy,
                  ["--contaminate", "uniform:0.1:Y1_heating_load"], seeds)
        (hm, cm), _ = m["mogp"]
        (hr, cr), sec = m["mo-rcgp"]
        ok = hr <= 0.5 * hm and cr <= 1.1 * cm and sec < 1.0
        print(f"\nheating ratio {hr / hm:.3f} (≤ 0.5), cooling ratio {cr / cm:.3f} (≤ 1.1), "
              f"mean fit {sec:.2f} s (< 1): {'met' if ok else 'NOT met'}")
        if a.check and not ok:
            sys.exit(1)
    elif a.suite == "energy":
        for kind in ["uniform", "asymmetric", "focused"]:
            table(a.bin, f"Energy, {kind}, --contaminate-protocol mo-rcgp", ENERGY, energy,
                  ["--contaminate", f"{kind}:0.1:Y1_heating_load", "--contaminate-protocol", "mo-rcgp"], seeds)
    else:
        table(a.bin, "Jura (259 rows, inputs Xloc,Yloc), uniform:0.1:Cd", JURA, ["Cd", "Ni", "Zn"],
              ["--inputs", "Xloc,Yloc", "--contaminate", "uniform:0.1:Cd"], seeds)


if __name__ == "__main__":
    main()
