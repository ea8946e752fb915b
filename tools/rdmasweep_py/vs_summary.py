"""tools/vs-perftest's summary: each figure of each point over the rounds, both tools'
medians, their ratio and the two-sided Mann-Whitney U p of their rounds."""

import statistics

from rdmasweep_py.stats import have_scipy, mann_whitney, min_attainable_p

ALPHA = 0.05


def summary_row(name, metric, perftest, rdmasweep, better):
    """One figure of one point over the rounds: both medians, their ratio, the two-sided
    Mann-Whitney U p of the two tools' rounds and what it says at ALPHA."""
    p_med, s_med = statistics.median(perftest), statistics.median(rdmasweep)
    row = {"point": name, "metric": metric, "rounds": f"{len(perftest)}/{len(rdmasweep)}", "perftest": p_med,
           "rdmasweep": s_med, "ratio": s_med / p_med if p_med else float("nan"), "better": better, "p": None,
           "perftest_rounds": list(perftest), "rdmasweep_rounds": list(rdmasweep)}
    if min_attainable_p(len(perftest), len(rdmasweep)) > ALPHA:
        row["verdict"] = f"too few rounds for p < {ALPHA}"
    elif not have_scipy():
        row["verdict"] = "no p: needs python3-scipy"
    else:
        row["p"] = mann_whitney(perftest, rdmasweep)
        ahead = s_med > p_med if better == "higher" else s_med < p_med
        row["verdict"] = ("no significant difference" if row["p"] >= ALPHA or s_med == p_med
                          else "rdmasweep better" if ahead else "rdmasweep worse")
    return row


def print_summary(tables, summary):
    for table in tables:
        print(f"\n{'same parameters' if table == 'same' else 'defaults'}: medians of the rounds (perftest/rdmasweep), "
              f"two-sided Mann-Whitney U p")
        print(f"{'point':32} {'metric':8} {'rounds':>6} {'perftest':>10} {'rdmasweep':>10} {'ratio':>7} {'p':>7}  "
              "better  verdict")
        for r in summary[table]:
            p = "-" if r["p"] is None else f"{r['p']:.3g}"
            print(f"{r['point']:32} {r['metric']:8} {r['rounds']:>6} {r['perftest']:10.4g} {r['rdmasweep']:10.4g} "
                  f"{r['ratio']:7.2f} {p:>7}  {r['better']:6}  {r['verdict']}")
