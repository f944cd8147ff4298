"""Summarise BO runs (JSONL of `botorch_bo.py` / `suggest_loop.py`) into Markdown and SVG plots.

Dependencies: `pip install numpy` (no plotting library: the SVG is written by hand).

Usage:
    python crates/experiments/peers/bo_summary.py --dir results/bo --problems hartmann6,rover60,lunar12 \
        --md results/bo_quality.md [--speed results/bo/speed.json,… --speed-md results/bo_speed.md]

Reads `{method}_{problem}_seed{S}.jsonl` for the methods botorch, suggest (trustgp suggest
loop) and random; a run counts if it has as many evaluations as the longest run of that
problem. For each problem and method it reports, after the last evaluation, the median and
mean ± std (over seeds) of the best value found, the median simple regret where the optimum is
known, and the median seconds per proposal; and it draws best value vs evaluations, mean ±
1 std over seeds, to `{dir}/{problem}.svg`.
"""
import argparse
import glob
import json
import os
import re
import statistics

import numpy as np

METHODS = [
    ("bo", "trustgp bo (GP + LogEI)", "#2ca02c"),
    ("suggest", "trustgp suggest (GP + LogEI)", "#1f77b4"),
    ("botorch", "BoTorch (SingleTaskGP + qLogEI)", "#d62728"),
    ("random", "random search", "#7f7f7f"),
]


def load(directory, method, problem):
    """{seed: list of JSON records} for the runs of `method` on `problem`."""
    runs = {}
    for path in glob.glob(os.path.join(directory, f"{method}_{problem}_seed*.jsonl")):
        found = re.search(r"_seed(\d+)\.jsonl$", path)
        if found is None:  # e.g. a run still being written under another name
            continue
        with open(path) as f:
            records = [json.loads(line) for line in f if line.strip()]
        if method == "bo":
            records = from_bo(records, problem, directory, int(found.group(1)))
        runs[int(found.group(1))] = records
    return runs


def from_bo(records, problem, directory, seed):
    """`trustgp bo --out` lines in the records of the loops: `best`, `phase` (the rows of the
    shared initial design are "init") and `seconds` per evaluation (bo writes elapsed time)."""
    init_csv = os.path.join(directory, f"init_{problem}_seed{seed}.csv")
    with open(init_csv) as f:
        n_init = sum(1 for line in f if line.strip()) - 1
    out, last = [], 0.0
    for rec in records:
        out.append({
            "eval": rec["iteration"],
            "phase": "init" if rec["iteration"] <= n_init else "bo",
            "x": rec["x"],
            "y": rec["y_clean"],
            "best": rec["best_clean"],
            "regret": rec["regret"],
            "seconds": rec["seconds"] - last,
        })
        last = rec["seconds"]
    return out


def svg_plot(title, series, ylabel):
    """Best value vs evaluations: lines (means) with ±1 std bands. `series` = [(label, colour,
    evals, mean, std)]."""
    w, h, ml, mr, mt, mb = 680, 420, 70, 20, 40, 110
    xs = np.concatenate([s[2] for s in series])
    lo = min(float(np.min(s[3] - s[4])) for s in series)
    hi = max(float(np.max(s[3] + s[4])) for s in series)
    pad = 0.03 * (hi - lo or 1.0)
    lo, hi = lo - pad, hi + pad
    x0, x1 = float(xs.min()), float(xs.max())

    def px(v):
        return ml + (v - x0) / (x1 - x0) * (w - ml - mr)

    def py(v):
        return mt + (hi - v) / (hi - lo) * (h - mt - mb)

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
        f'font-family="sans-serif" font-size="12">',
        f'<rect width="{w}" height="{h}" fill="white"/>',
        f'<text x="{w / 2}" y="22" text-anchor="middle" font-size="15">{title}</text>',
    ]
    for t in np.linspace(lo, hi, 6):
        out.append(f'<line x1="{ml}" x2="{w - mr}" y1="{py(t):.1f}" y2="{py(t):.1f}" stroke="#eee"/>')
        out.append(f'<text x="{ml - 6}" y="{py(t) + 4:.1f}" text-anchor="end">{t:.3g}</text>')
    for t in np.linspace(x0, x1, 6):
        out.append(f'<text x="{px(t):.1f}" y="{h - mb + 18}" text-anchor="middle">{t:.0f}</text>')
    out.append(
        f'<rect x="{ml}" y="{mt}" width="{w - ml - mr}" height="{h - mt - mb}" fill="none" stroke="black"/>'
    )
    out.append(f'<text x="{(ml + w - mr) / 2}" y="{h - mb + 38}" text-anchor="middle">evaluations</text>')
    out.append(
        f'<text transform="translate(18,{(mt + h - mb) / 2}) rotate(-90)" text-anchor="middle">{ylabel}</text>'
    )
    for k, (label, colour, ev, mean, std) in enumerate(series):
        upper = " ".join(f"{px(a):.1f},{py(b):.1f}" for a, b in zip(ev, mean + std))
        lower = " ".join(f"{px(a):.1f},{py(b):.1f}" for a, b in zip(ev[::-1], (mean - std)[::-1]))
        out.append(f'<polygon points="{upper} {lower}" fill="{colour}" fill-opacity="0.15" stroke="none"/>')
        line = " ".join(f"{px(a):.1f},{py(b):.1f}" for a, b in zip(ev, mean))
        out.append(f'<polyline points="{line}" fill="none" stroke="{colour}" stroke-width="2"/>')
        ly = h - mb + 58 + 16 * k
        out.append(f'<line x1="{ml}" x2="{ml + 24}" y1="{ly - 4}" y2="{ly - 4}" stroke="{colour}" stroke-width="3"/>')
        out.append(f'<text x="{ml + 30}" y="{ly}">{label} (mean ± 1 std over seeds)</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def summarise(directory, problem):
    """(markdown lines, svg text or None) for one problem."""
    found = {m: load(directory, m, problem) for m, _, _ in METHODS}
    budget = max((len(r) for runs in found.values() for r in runs.values()), default=0)
    if budget == 0:
        return [f"No runs found for {problem}.", ""], None
    lines = [
        f"| method | seeds | median best | mean ± std best | median simple regret | median s / proposal |",
        "|---|---|---|---|---|---|",
    ]
    series = []
    for method, label, colour in METHODS:
        runs = {s: r for s, r in found[method].items() if len(r) == budget}
        if not runs:
            continue
        seeds = sorted(runs)
        best = np.array([[rec["best"] for rec in runs[s]] for s in seeds])
        regret = [runs[s][-1]["regret"] for s in seeds]
        secs = [rec["seconds"] for s in seeds for rec in runs[s] if rec["phase"] != "init"]
        med_regret = "n/a (optimum unknown)" if regret[0] is None else f"{statistics.median(regret):.4g}"
        med_secs = "—" if method == "random" else f"{statistics.median(secs):.3f}"
        lines.append(
            f"| {label} | {len(seeds)} ({seeds[0]}–{seeds[-1]}) | {np.median(best[:, -1]):.4f} | "
            f"{best[:, -1].mean():.4f} ± {best[:, -1].std(ddof=1) if len(seeds) > 1 else 0.0:.4f} | "
            f"{med_regret} | {med_secs} |"
        )
        ev = np.arange(1, budget + 1)
        std = best.std(axis=0, ddof=1) if len(seeds) > 1 else np.zeros(budget)
        series.append((label, colour, ev, best.mean(axis=0), std))
    lines.append("")
    lines.extend(paired(found, budget))
    svg = svg_plot(f"{problem}: best value found", series, "best value (maximised)")
    return lines, svg


def paired(found, budget):
    """Seed-by-seed comparison of trustgp's final best with each other method's, on the seeds
    both completed (same initial rows per seed)."""
    finals = {
        m: {s: r[-1] for s, r in runs.items() if len(r) == budget} for m, runs in found.items()
    }
    out = []
    pairs = [(ours, other, label) for ours in ("bo", "suggest")
             for other, label in [("botorch", "BoTorch"), ("random", "random search")]]
    for ours, other, label in pairs:
        common = sorted(set(finals[ours]) & set(finals[other]))
        if not common:
            continue
        wins = sum(finals[ours][s]["best"] >= finals[other][s]["best"] for s in common)
        text = (
            f"trustgp {ours} ≥ {label} in final best value on {wins} of {len(common)} seeds "
            f"(paired: same initial rows)"
        )
        if finals[ours][common[0]]["regret"] is not None:
            mt = statistics.median(finals[ours][s]["regret"] for s in common)
            mo = statistics.median(finals[other][s]["regret"] for s in common)
            sign = "≤" if mt <= mo else ">"
            text += (
                f"; median simple regret over these seeds {mt:.4g} (trustgp) vs {mo:.4g} "
                f"({label}): **trustgp {sign} {label}**"
            )
        out.append(f"* {text}.")
    return out + [""] if out else []


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", default="results/bo")
    ap.add_argument("--problems", default="hartmann6")
    ap.add_argument("--md", default="results/bo_quality.md")
    ap.add_argument("--preamble", help="Markdown file put before the tables (commands, notes)")
    ap.add_argument("--speed")
    ap.add_argument("--speed-md")
    a = ap.parse_args()
    md = []
    if a.preamble:
        with open(a.preamble) as f:
            md.append(f.read().rstrip() + "\n")
    for problem in a.problems.split(","):
        lines, svg = summarise(a.dir, problem)
        md.append(f"## {problem}")
        md.append("")
        if svg is not None:
            path = os.path.join(a.dir, f"{problem}.svg")
            with open(path, "w") as f:
                f.write(svg)
            md.append(f"![{problem}: best value vs evaluations]({os.path.relpath(path, os.path.dirname(a.md))})\n")
            md.append("")
        md.extend(line + "\n" for line in lines)
    with open(a.md, "w") as f:
        f.write("\n".join(s.rstrip("\n") for s in md) + "\n")
    if a.speed and a.speed_md:
        text = [
            "# One BO iteration: trustgp suggest vs BoTorch (100 Hartmann6 rows, 6-D, q = 1)",
            "",
            "Generated by `crates/experiments/peers/bo_summary.py --speed …` from the JSON that",
            "`crates/experiments/peers/botorch_speed.py` writes. Both tools are timed alternately in",
            "one process on the same CSV (`results/bo/speed_hartmann6_n100.csv`): BoTorch's",
            "iteration in-process (model fit + acquisition optimisation, no start-up), trustgp as a",
            "whole `trustgp suggest` process (start-up, CSV parsing, fit, LogEI optimisation, JSON",
            "output). The machine has 2 cores shared with other jobs (load averages below), so",
            "absolute times are inflated; with torch's default of 2 threads on a loaded machine,",
            "BoTorch's time is dominated by thread oversubscription, so the 1-thread run is the",
            "representative comparison.",
            "",
        ]
        for path in a.speed.split(","):
            with open(path) as f:
                text += speed_section(json.load(f))
        with open(a.speed_md, "w") as f:
            f.write("\n".join(text) + "\n")


def speed_section(s):
    """Markdown lines for one `botorch_speed.py` result."""
    return [
        f"## torch with {s['torch_threads']} thread(s)",
        "",
        f"Command: `{s['command']}`",
        "",
        "| | median seconds | all repeats (s) |",
        "|---|---|---|",
        f"| BoTorch: fit SingleTaskGP + optimize_acqf(qLogEI, 10 restarts, 512 raw) | "
        f"{s['botorch_median_s']:.3f} | {', '.join(f'{v:.3f}' for v in s['botorch_s'])} |",
        f"| `trustgp suggest` process (fit + LogEI optimisation + start-up and I/O) | "
        f"{s['trustgp_median_s']:.3f} | {', '.join(f'{v:.3f}' for v in s['trustgp_s'])} |",
        f"| … of which trustgp's own reported `seconds` | {s['trustgp_reported_median_s']:.3f} | "
        f"{', '.join(f'{v:.3f}' for v in s['trustgp_reported_s'])} |",
        "",
        f"Ratio BoTorch / trustgp (medians, whole process): **{s['ratio_botorch_over_trustgp']:.1f}×**. "
        f"{s['repeats']} alternating repeats in one run; n = {s['n']}, d = {s['d']}; torch "
        f"{s['torch']} with {s['torch_threads']} threads, botorch {s['botorch']}, {s['cpus']} CPUs "
        f"({s['machine']}); 1-minute load average {s['load_average_before_after'][0]:.1f} before and "
        f"{s['load_average_before_after'][1]:.1f} after (the machine is shared with other jobs).",
        "",
    ]


if __name__ == "__main__":
    main()
