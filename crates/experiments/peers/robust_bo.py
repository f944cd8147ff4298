"""Robust BO (issue 22, RCaGP paper Fig. 4, reduced): `trustgp bo` with 25% asymmetric outliers
and without, on Hartmann6 and Rover60, for the EULBO rows (SVGP, RCSVGP, CaGP, RCaGP) and for
the exact surrogates (GP vs RCGP with LogEI), the DPP-BO rows (Fig. 4 row 2) and the TuRBO
rows (Fig. S2: EULBO-TuRBO and LogEI in the trust region), and, with `--n0-250`, the exact
surrogates from the paper's 250 initial points (a separate table). Writes
results/bo/robust/*.jsonl (results/bo/robust250/ for n0 = 250), the summary results/bo_robust.md
and one SVG per problem and setting.

Needs: numpy (`pip install numpy`) and the release binary (`cargo build --release -p
trustgp-cli`). From the repository root:

    python crates/experiments/peers/robust_bo.py [--seeds 3] [--jobs 2] [--summary-only] [--n0-250]

The summary keeps what follows its generated part in results/bo_robust.md (the sections from
`## Expert-guided prior mean` on, written by hand).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from bo_summary import svg_plot  # noqa: E402

OUT = "results/bo/robust"
# (problem, initial design, budget): the paper starts from 250 points; reduced here for time.
PROBLEMS = [("hartmann6", 50, 150), ("rover60", 50, 120)]
# (label, model, method, robust centre): Fig. 4 row 1 (EULBO-EI) and the exact surrogates;
# the robust models with their weights centred on the prior mean (`--robust-centre prior`,
# the paper's weight) and on leave-one-out means (`--robust-centre loo`).
RUNS = [
    ("SVGP (EULBO)", "svgp", "eulbo", None),
    ("RCSVGP (EULBO)", "rcsvgp", "eulbo", None),
    ("CaGP (EULBO)", "cagp", "eulbo", None),
    ("RCaGP (EULBO)", "rcagp", "eulbo", "prior"),
    ("RCaGP, LOO centre (EULBO)", "rcagp", "eulbo", "loo"),
    ("GP (LogEI)", "gp", "standard", None),
    ("RCGP (LogEI)", "rcgp", "standard", "prior"),
    ("RCGP, LOO centre (LogEI)", "rcgp", "standard", "loo"),
    # Fig. 4 row 2 (DPP-BO-EI, `--method dpp`): run on Hartmann6 with outliers only so far
    # (`--only "SVGP (DPP)" …`); the cells of runs not made stay "—".
    ("SVGP (DPP)", "svgp", "dpp", None),
    ("RCSVGP (DPP)", "rcsvgp", "dpp", None),
    ("CaGP (DPP)", "cagp", "dpp", None),
    ("RCaGP (DPP)", "rcagp", "dpp", "prior"),
    # Fig. S2 (TuRBO): the paper's EULBO-TuRBO-EI (`--method eulbo-turbo`) and, beside it,
    # LogEI inside the same trust region (`--method turbo`); Hartmann6 with outliers only.
    ("SVGP (EULBO-TuRBO)", "svgp", "eulbo-turbo", None),
    ("RCSVGP (EULBO-TuRBO)", "rcsvgp", "eulbo-turbo", None),
    ("CaGP (EULBO-TuRBO)", "cagp", "eulbo-turbo", None),
    ("RCaGP (EULBO-TuRBO)", "rcagp", "eulbo-turbo", "prior"),
    ("SVGP (TuRBO)", "svgp", "turbo", None),
    ("RCSVGP (TuRBO)", "rcsvgp", "turbo", None),
    ("CaGP (TuRBO)", "cagp", "turbo", None),
    ("RCaGP (TuRBO)", "rcagp", "turbo", "prior"),
]
# The paper's initial design (n0 = 250) for the exact surrogates on Hartmann6, budget 350
# (100 evaluations after the design): a separate table (`--n0-250` runs it).
OUT_250 = "results/bo/robust250"
PROBLEM_250 = ("hartmann6", 250, 350)
RUNS_250 = [("GP (LogEI)", "gp", "standard", None), ("RCGP (LogEI)", "rcgp", "standard", "prior")]
SETTINGS = [("asymmetric 25%", "asymmetric:0.25"), ("clean", None)]
# The exact surrogates run with outliers only, except the GP: its clean row is the ceiling a
# robust surrogate could recover.
CLEAN_STANDARD = {"gp"}
# Cells whose runs predate the current code, (problem, label, setting) -> why: marked † in the
# tables and listed under them. Empty since the final session reran every stale cell (after
# EULBO's utility over the best posterior mean, EULBO's last-epoch result, the robust sparse
# surrogates' learned noise and the DPP fix); add an entry when a change of the code leaves
# stored runs behind.
STALE = {}
FREE_NOISE_NOTE = [
    "**The robust sparse surrogates learn their noise** (issue 22, `docs/decisions.md`, "
    "`sequential::bayes_opt::FREE_NOISE_SURROGATES`): `rcsvgp` and `rcagp` as BO surrogates "
    "now learn their noise variance in their own bound (β = 1, `--free-noise`), as the RCaGP "
    "paper's BO does, instead of the regression default (noise fixed at an exact RCGP's "
    "estimate raised to the robust scale of its leave-one-out residuals). On a noise-free "
    "objective those residuals are interpolation error: on Hartmann6 the default fixed RCaGP's "
    "noise at 0.3–0.5 (standardised), the learned one is 0.0004–0.02, and the default RCaGP "
    "smoothed inputs away. Under the default the RCaGP (EULBO) cell with outliers was 2.08 ± "
    "0.49 (6 seeds, rerun with EULBO's last-epoch rule) against CaGP's 2.81 ± 0.27; with the "
    "learned noise it is the cell below. The rows rerun with it: Hartmann6 RCSVGP and RCaGP "
    "(EULBO), both columns, and every DPP, TuRBO and EULBO-TuRBO cell; on Rover60 every "
    "cell but the exact surrogates (whose code path is unchanged); the RCaGP LOO-centre "
    "rows too. No cell predates it or an earlier change.",
    "",
]
# The hand-written sections after the generated part.
KEEP_FROM = "\n## Expert-guided prior mean"
DPP_NOTE = [
    "**DPP rows** (`--method dpp`, Fig. 4 row 2, DPP-BO-EI of Moss et al. 2023): each "
    "proposal fits the surrogate with its 25 inducing inputs (CaGP/RCaGP: dense actions "
    "`k(X, Z)`) chosen among the evaluated inputs by a quality-weighted DPP (EI under a first "
    "fit as quality), then maximises LogEI. E.g. `trustgp bo --problem hartmann6 --init 50 "
    "--budget 150 --model rcagp --method dpp --seed 0 --robust-centre prior --outliers "
    "asymmetric:0.25 --out "
    "results/bo/robust/hartmann6_rcagp_dpp_outliers_seed0.jsonl`; n in each cell says how many "
    "seeds finished. Rover60 (asymmetric 25%, 50 initial points, budget 120): `trustgp bo "
    "--problem rover60 --init 50 --budget 120 --model M --method dpp --seed S --outliers "
    "asymmetric:0.25 --out results/bo/robust/rover60_M_dpp_outliers_seedS.jsonl` (rcagp with "
    "`--robust-centre prior`). Hartmann6 without outliers (the clean column): the same "
    "command without `--outliers`. **Every DPP cell was rerun after a fix of the DPP** "
    "(`docs/decisions.md`): its stopping threshold carried the kernel's variance and the "
    "squared EI, so a confident surrogate got fewer than 25 inducing inputs — RCaGP, with its "
    "learned noise, one: a flat model that never improved on its initial design (RCaGP (DPP) "
    "was 1.93 ± 0.66 on Hartmann6 and −24.1 ± 9.7 on Rover60 with outliers, 3 seeds). The "
    "threshold is now on the kernel's relative residual variance and the qualities are "
    "floored at 10⁻⁴ of their maximum, so the DPP fills all 25 slots unless the kernel is "
    "numerically of lower rank.",
    "",
]
TURBO_NOTE = [
    "**TuRBO rows** (Fig. S2, Hartmann6, asymmetric 25%, 50 initial points, budget 150, seeds "
    "0–2): the search box is TuRBO's trust region (`rcagp.md` §3.5 constants), centred at the "
    "evaluated input with the best posterior mean of the fitted surrogate (not at the best, "
    "possibly outlying, observation; see `docs/decisions.md`); the region follows the clean "
    "values. `(EULBO-TuRBO)` is the paper's EULBO-TuRBO-EI (`--method eulbo-turbo`: EULBO's "
    "joint model and query optimisation inside the region), `(TuRBO)` maximises LogEI inside "
    "the region (`--method turbo`). E.g. `trustgp bo --problem hartmann6 --init 50 --budget "
    "150 --model rcagp --method eulbo-turbo --seed 0 --robust-centre prior --outliers "
    "asymmetric:0.25 --out results/bo/robust/hartmann6_rcagp_eulbo-turbo_outliers_seed0.jsonl`. "
    "The paper (Fig. S2): TuRBO improves all models except on Lunar; RCaGP has strong "
    "average performance and never ranks last with statistical significance.",
    "",
]
EULBO_RESULT_NOTE = [
    "**EULBO's result is the last epoch's point** (issue 22, `docs/decisions.md`): EULBO "
    "used to return the best of the start and its epochs, and an SVGP surrogate fitted to "
    "its ELBO optimum always lost that comparison (Adam's first step moves each of its "
    "~1600 parameters by 0.01 and cost 28.7 nats of ELBO, Hartmann6 seed 0, evaluation 51, "
    "while the query step gains about 0.005 in utility per epoch), so SVGP's EULBO rows "
    "evaluated exactly the LogEI points (SVGP (EULBO-TuRBO) = SVGP (TuRBO) on all three "
    "seeds). Now, as `rcagp.md` §3.5 step 9 and the reference code, the point after the "
    "last epoch is proposed and the start comes back only after numerical failures; the "
    "first EULBO-TuRBO proposal moves 0.005–0.028 (box units, largest coordinate) from the "
    "LogEI point. Rerun with this fix: every Hartmann6 EULBO cell of Fig. 4 row 1 but the "
    "LOO-centre row (SVGP, RCSVGP, CaGP, RCaGP, both columns), SVGP (EULBO-TuRBO), and "
    "Rover60's CaGP and RCaGP (EULBO) with outliers. Over whole runs it mattered: CaGP "
    "(EULBO) with outliers went from 2.69 ± 0.25 to 2.81 ± 0.27 (the same 6 seeds), "
    "RCSVGP's from 2.52 ± 0.89 to 2.40 ± 0.53 (3 seeds, before the learned noise).",
    "",
]
PAPER = [
    "**The paper's qualitative claims (`rcagp.md` §5.5, Fig. 4, 20 trials from 250 points):** "
    "EULBO-EI with asymmetric outliers: RCaGP first or on par with CaGP on Hartmann6, Lunar12 "
    "and Rover60, clearly best on Lasso-DNA; SVGP ≈ RCSVGP. Without outliers: RCaGP has a "
    "clear advantage on Hartmann6.",
    "",
    "**Issue 22's robust-BO criterion** (with 25% asymmetric outliers, RCaGP first or on par "
    "in the Fig. 4 rows on Hartmann6 and Rover60, and RCGP/RCaGP beating GP/CaGP in best clean "
    "value) is checked from the runs by the 'Criterion' and 'Fig. 4 row 1' lines under each "
    "table (a difference counts as a win or a loss beyond one standard error of the "
    "difference of the means).",
    "",
]
WHY = [
    "**Why the exact RCGP rows do not win here** (issue 22's robustness pass; the numbers and "
    "the weights of the runs are in `docs/decisions.md`; the RCaGP rows win since the sparse "
    "robust surrogates learn their noise, see below): the outliers cost the exact GP "
    "0.24 on Hartmann6 (clean 3.27, with outliers 3.03, 10 seeds), and RCGP recovers none of "
    "it. (1) The prior-centred IMQ weight measures height, not outlyingness: the outlier "
    "shift is fixed at 1–2 initial stds while the search climbs, so in the model's units it "
    "is 0.5–0.75 against c ≈ 1.3, and the best clean points get weights as low as the "
    "outliers' (after 100 evaluations lower: 0.69–0.74 vs 0.78–0.86). (2) Weights in "
    "[0.6, 1] raise an outlier's noise variance at most 2.8-fold, and the outliers sit "
    "3.5–5 noise stds up, so the posterior still follows them. (3) Leave-one-out centres "
    "separate outliers from the best points (ŵ 0.62–0.72 vs 0.97) but RCGP with them "
    "lost on the search (one seed resampled a local cluster for 100 evaluations). The "
    "reference code's c = 20 gives every point ŵ ≥ 0.97, i.e. no down-weighting at all. "
    "(4) Nor is it the objective: the exact RCGP posterior with its noise and mean learned "
    "in RCaGP's bound (β = 1; a scratch build giving `rcagp` n block actions, LogEI, seeds "
    "0–8) reached 2.852 ± 0.311 against the GP's 3.018 ± 0.205 (paired −0.17 ± 0.12).",
    "",
]
COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf", "#000000", "#aec7e8"]


def path(problem, model, method, centre, setting, seed, out=OUT):
    tag = "clean" if setting is None else "outliers"
    # Runs from before --robust-centre existed are the prior centre: their names stay.
    name = model if centre in (None, "prior") else f"{model}-{centre}"
    return f"{out}/{problem}_{name}_{method}_{tag}_seed{seed}.jsonl"


def command(binary, problem, init, budget, model, method, centre, setting, seed, out=OUT):
    cmd = [binary, "bo", "--problem", problem, "--init", str(init), "--budget", str(budget),
           "--model", model, "--method", method, "--seed", str(seed),
           "--out", path(problem, model, method, centre, setting, seed, out)]
    if centre is not None:
        cmd += ["--robust-centre", centre]
    if setting is not None:
        cmd += ["--outliers", setting]
    return cmd


def run(cmd):
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        return f"FAILED {' '.join(cmd)}: {done.stderr.strip()}"
    return json.loads(done.stdout)["seconds"]


def load(p, budget):
    """The best clean value after each evaluation of a finished run; None for a run still
    being written (or cut short)."""
    with open(p) as f:
        lines = f.read().splitlines()
    if len(lines) != budget:
        return None
    return [json.loads(line)["best_clean"] for line in lines]


def criterion(finals_of):
    """Issue 22's robust-BO criterion on one problem, with asymmetric outliers: the robust
    surrogate against its non-robust twin (difference of means, and the std of that difference
    from the seeds), per centre."""
    out = []
    pairs = [("RCaGP (EULBO)", "CaGP (EULBO)"), ("RCaGP, LOO centre (EULBO)", "CaGP (EULBO)"),
             ("RCaGP (DPP)", "CaGP (DPP)"), ("RCGP (LogEI)", "GP (LogEI)"),
             ("RCGP, LOO centre (LogEI)", "GP (LogEI)")]
    for robust, plain in pairs:
        a = finals_of.get((robust, "asymmetric 25%"))
        b = finals_of.get((plain, "asymmetric 25%"))
        if not a or not b:
            continue
        diff = statistics.mean(a) - statistics.mean(b)
        se = (statistics.variance(a) / len(a) + statistics.variance(b) / len(b)) ** 0.5 \
            if len(a) > 1 and len(b) > 1 else float("nan")
        verdict = ("beats" if diff > se else "trails" if diff < -se
                   else "is within one standard error of")
        out.append(f"* Criterion, asymmetric 25%: {robust} {verdict} {plain}: "
                   f"{diff:+.3g} in mean final best (± {se:.2g}, one standard error).")
    for rcagp, other in [("RCaGP (EULBO)", "RCaGP, LOO centre (EULBO)"),
                         ("RCaGP, LOO centre (EULBO)", "RCaGP (EULBO)")]:
        eulbo = [(label, statistics.mean(f)) for (label, sname), f in finals_of.items()
                 if sname == "asymmetric 25%" and label.endswith("(EULBO)") and label != other]
        ranked = [label for label, _ in sorted(eulbo, key=lambda t: -t[1])]
        if rcagp in ranked:
            out.append(f"* Fig. 4 row 1 (EULBO, asymmetric 25%, SVGP, RCSVGP, CaGP and "
                       f"{rcagp}): RCaGP ranks {ranked.index(rcagp) + 1} of {len(ranked)} "
                       f"by mean final best (the paper: first or on par with CaGP).")
    for tag, figure, claim in [
            ("DPP", "Fig. 4 row 2 (DPP-BO-EI", "first or on par with CaGP"),
            ("EULBO-TuRBO", "Fig. S2 (EULBO-TuRBO-EI", "strong on average, never last"),
            ("TuRBO", "Fig. S2 rows with LogEI (TuRBO", "strong on average, never last")]:
        group = sorted(((label, statistics.mean(f)) for (label, sname), f in finals_of.items()
                        if sname == "asymmetric 25%" and label.endswith(f"({tag})")),
                       key=lambda t: -t[1])
        ranked = [label for label, _ in group]
        if f"RCaGP ({tag})" in ranked:
            n = min(len(finals_of[(label, "asymmetric 25%")]) for label in ranked)
            out.append(f"* {figure}, asymmetric 25%, {len(ranked)} surrogates, at least {n} "
                       f"seed(s) each): RCaGP ranks {ranked.index(f'RCaGP ({tag})') + 1} of "
                       f"{len(ranked)} by mean final best (the paper: {claim}).")
    return out


def n0_250_section(seeds):
    """The separate table of the exact surrogates from the paper's n0 = 250 (Hartmann6)."""
    p, i, b = PROBLEM_250
    lines = [f"## {p}, n₀ = 250 (the paper's initial design; exact surrogates)", "",
             f"GP and RCGP with LogEI from {i} initial points, budget {b} (100 sequential "
             "evaluations), seeds 0–9, 25% asymmetric outliers (they contaminate the initial "
             "design too) and, for the GP, without; the other settings as above. Commands:", "",
             "```"]
    for label, m, meth, c in RUNS_250:
        for _, s in SETTINGS:
            if s is None and m not in CLEAN_STANDARD:
                continue
            lines.append(" ".join(command("trustgp", p, i, b, m, meth, c, s, "S", OUT_250)))
    lines += ["```", "",
              "| surrogate | " + " | ".join(s for s, _ in SETTINGS)
              + " | best after the design (asymmetric 25%) |", "|---|" + "---|" * 3]
    finals_of = {}
    for label, m, meth, c in RUNS_250:
        cells, first = [], "—"
        for sname, s in SETTINGS:
            files = [path(p, m, meth, c, s, seed, OUT_250) for seed in range(seeds)]
            runs = [load(f, b) for f in files if os.path.exists(f)]
            runs = [r for r in runs if r is not None]
            if not runs:
                cells.append("—")
                continue
            finals = [r[-1] for r in runs]
            finals_of[(label, sname)] = finals
            sd = statistics.stdev(finals) if len(finals) > 1 else 0.0
            cells.append(f"{statistics.mean(finals):.4g} ± {sd:.2g} (n={len(runs)})")
            if s is not None:
                after = [r[i - 1] for r in runs]
                first = f"{statistics.mean(after):.4g} ± {statistics.stdev(after):.2g}" \
                    if len(after) > 1 else f"{after[0]:.4g}"
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {first} |")
    lines.append("")
    a = finals_of.get(("RCGP (LogEI)", "asymmetric 25%"))
    g = finals_of.get(("GP (LogEI)", "asymmetric 25%"))
    if a and g and len(a) == len(g) and len(a) > 1:
        # Same seed, same initial design and the same outliers in it: paired by seed.
        d = [x - y for x, y in zip(a, g)]
        se = statistics.stdev(d) / len(d) ** 0.5
        verdict = ("beats" if statistics.mean(d) > se else "trails"
                   if statistics.mean(d) < -se else "is within one standard error of")
        wins = sum(x > y for x, y in zip(a, g))
        lines.append(f"* Criterion, asymmetric 25%, n₀ = 250: RCGP (LogEI) {verdict} GP (LogEI): "
                     f"{statistics.mean(d):+.3g} in mean final best (± {se:.2g}, one standard "
                     f"error of the paired differences; RCGP ahead on {wins} of {len(d)} seeds).")
    clean = finals_of.get(("GP (LogEI)", "clean"))
    if g and clean:
        cost = statistics.mean(clean) - statistics.mean(g)
        lines.append(f"* The outliers cost the GP {cost:.3g} "
                     "in mean final best (clean minus asymmetric 25%).")
    lines.append("")
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--trustgp", default="target/release/trustgp")
    ap.add_argument("--summary-only", action="store_true")
    ap.add_argument("--only", nargs="*", default=None,
                    help="run only these rows (labels of RUNS); the summary covers all rows")
    ap.add_argument("--missing-only", action="store_true",
                    help="run only the runs whose output file is missing or incomplete")
    ap.add_argument("--n0-250", action="store_true",
                    help="run the n0 = 250 table's runs (seeds 0 to --seeds - 1) instead")
    a = ap.parse_args()
    os.makedirs(OUT, exist_ok=True)
    os.makedirs(OUT_250, exist_ok=True)
    jobs = [(p, i, b, m, meth, c, s, seed)
            for p, i, b in PROBLEMS for label, m, meth, c in RUNS for _, s in SETTINGS
            for seed in range(a.seeds)
            if not (meth == "standard" and s is None and m not in CLEAN_STANDARD)
            and (a.only is None or label in a.only)
            and not (a.missing_only and os.path.exists(path(p, m, meth, c, s, seed))
                     and load(path(p, m, meth, c, s, seed), b) is not None)]
    out = OUT
    if a.n0_250:
        p, i, b = PROBLEM_250
        out = OUT_250
        jobs = [(p, i, b, m, meth, c, s, seed) for _, m, meth, c in RUNS_250
                for _, s in SETTINGS for seed in range(a.seeds)
                if not (s is None and m not in CLEAN_STANDARD)]
    seconds = {}
    if not a.summary_only:
        with ThreadPoolExecutor(a.jobs) as ex:
            results = ex.map(lambda j: (j, run(command(a.trustgp, *j, out=out))), jobs)
            for j, r in results:
                print(j, r, flush=True)
                seconds[j] = r
    lines = [
        "# Robust Bayesian optimisation: RCaGP paper Fig. 4 (reduced)",
        "",
        "Generated by `python crates/experiments/peers/robust_bo.py --seeds "
        f"{a.seeds}` from the runs of `trustgp bo` (one command per line below). Every run: "
        "maximise; initial design of scrambled-Sobol points, then one evaluation per "
        "iteration (q = 1); `--outliers asymmetric:0.25` adds U(1σ̄, 2σ̄) (σ̄ the std of the "
        "standardised initial values) to each evaluation with probability 0.25, in what the "
        "surrogate sees; the reported value is the best CLEAN value found. EULBO rows start "
        "each query from the LogEI maximiser and then optimise the model and the point jointly "
        "(`--method eulbo`); GP/RCGP rows maximise LogEI (`--method standard`).",
        "",
        "**Reduced protocol** (the paper: 250 initial points, 20 trials, budget not stated): "
        + "; ".join(f"{p}: {i} initial points, budget {b}" for p, i, b in PROBLEMS)
        + f"; up to {a.seeds} seeds (0–{a.seeds - 1}), n in each cell. Mean ± std of the final "
        "best clean value.",
        "",
        "Example command: `" + " ".join(command("trustgp", "hartmann6", 50, 150, "rcagp",
                                                 "eulbo", "loo", "asymmetric:0.25", 0)) + "`",
        "",
        "Seeds: every run of seeds 0 to " f"{a.seeds - 1}" " whose file exists counts (n in each "
        "cell): 10 seeds for the exact surrogates and for CaGP and RCaGP (EULBO) with outliers "
        "on Hartmann6, 6 for the exact surrogates and for CaGP and RCaGP (EULBO) with outliers on "
        "Rover60, for the DPP rows with outliers on both and for Hartmann6's RCaGP LOO centre, 3 "
        "elsewhere. A † would mark cells whose runs predate a later change of the code "
        "(listed under each table with the change); none does now. The "
        "exact-surrogate rows (GP, RCGP) use neither EULBO nor the sparse surrogates' noise: "
        "their code path is unchanged.",
        "",
        "`--robust-centre prior` centres RCGP's/RCaGP's IMQ weights on the prior mean (the "
        "paper's weight; the rows without 'LOO centre'), `--robust-centre loo` on each "
        "observation's leave-one-out mean under a first exact-GP fit (see "
        "`docs/decisions.md`). The other rows have no robust weights.",
        "",
    ]
    lines += PAPER + WHY
    lines += DPP_NOTE + TURBO_NOTE + EULBO_RESULT_NOTE + FREE_NOISE_NOTE
    for p, i, b in PROBLEMS:
        lines += [f"## {p}", "", "| surrogate | " + " | ".join(s for s, _ in SETTINGS) + " |",
                  "|---|" + "---|" * len(SETTINGS)]
        curves = {s: [] for s, _ in SETTINGS}
        finals_of = {}
        for k, (label, m, meth, c) in enumerate(RUNS):
            cells = []
            for sname, s in SETTINGS:
                runs = [load(path(p, m, meth, c, s, seed), b) for seed in range(a.seeds)
                        if os.path.exists(path(p, m, meth, c, s, seed))]
                runs = [r for r in runs if r is not None]
                if not runs:
                    cells.append("—")
                    continue
                finals = [r[-1] for r in runs]
                finals_of[(label, sname)] = finals
                sd = statistics.stdev(finals) if len(finals) > 1 else 0.0
                mark = " †" if (p, label, sname) in STALE else ""
                cells.append(f"{statistics.mean(finals):.4g} ± {sd:.2g} (n={len(runs)}){mark}")
                arr = np.array(runs)
                ev = np.arange(1, arr.shape[1] + 1)
                curves[sname].append((label, COLOURS[k % len(COLOURS)], ev, arr.mean(0),
                                      arr.std(0)))
            # Rows without a single finished run (e.g. TuRBO on Rover60) are left out.
            if any(cell != "—" for cell in cells):
                lines.append(f"| {label} | " + " | ".join(cells) + " |")
        lines.append("")
        stale = [f"{label} ({sname}): {why}" for (q, label, sname), why in STALE.items()
                 if q == p and (label, sname) in finals_of]
        if stale:
            lines.append("† Runs that predate a later change: " + "; ".join(stale) + ".")
            lines.append("")
        for sname, _ in SETTINGS:
            ranked = sorted(curves[sname], key=lambda c: -c[3][-1])
            if ranked:
                lines.append(f"* Ours, {sname}, ranked by mean final best: "
                             + " > ".join(c[0] for c in ranked) + ".")
        lines += criterion(finals_of)
        lines.append("")
        for sname, s in SETTINGS:
            if curves[sname]:
                tag = "clean" if s is None else "outliers"
                svg = f"results/bo/robust_{p}_{tag}.svg"
                with open(svg, "w") as f:
                    f.write(svg_plot(f"{p}, {sname}: best clean value", curves[sname],
                                     "best clean value"))
                lines.append(f"![{p} {sname}](bo/robust_{p}_{tag}.svg)")
        lines.append("")
    lines += n0_250_section(10)
    kept = ""
    if os.path.exists("results/bo_robust.md"):
        with open("results/bo_robust.md") as f:
            old = f.read()
        if KEEP_FROM in old:
            kept = old[old.index(KEEP_FROM):]
    with open("results/bo_robust.md", "w") as f:
        f.write("\n".join(lines) + "\n" + kept)


if __name__ == "__main__":
    main()
