"""tools/vs-perftest --table pacing: both tools paced at the same offered message rates
(shares of the point's flat-out rate, measured first in the same run) and how far each
one's achieved rate falls from what it was asked for.

perftest paces with its software rate limiter, one message per burst (--rate_limit=R
--rate_units=p --rate_limit_type=SW --burst_size=1); rdmasweep with --rate Rpps
--arrivals constant, and alone with --arrivals poisson (perftest has no random
arrivals). Both signal every message (-Q 1): rdmasweep's paced loop always does, so the
flat-out rate the shares are taken of is measured with -Q 1 on both too, and is the
lower of the two tools' medians, so that 90 % is within both tools' reach."""

import argparse
import statistics

OPS = ("write", "send", "read")
SIZE = 64
FLAT_ITERS = 20000
MIN_ITERS = 1000
DEFAULT_SHARES = "5,25,50,75,90"
WITHIN_PCT = 1.0  # the error rdmasweep is held to (issue's bar: at most 1 % from 5 % to 90 %)


def point(op, iters):
    """The vs-perftest point: op, bandwidth, one QP, 64 B."""
    return (op, "bw", 1, SIZE, iters, "")


def shares(text):
    """"5,25,90" -> [5.0, 25.0, 90.0], each in (0, 100]."""
    try:
        out = [float(s) for s in text.split(",") if s.strip()]
    except ValueError:
        out = []
    if not out or any(not 0 < s <= 100 for s in out):
        raise argparse.ArgumentTypeError(f"{text}: give percentages above 0 and at most 100, e.g. 5,25,50,75,90")
    return out


def offered(flat_out_pps, share):
    """The message rate both tools are asked for at `share` % of the flat-out rate."""
    return max(1, int(round(flat_out_pps * share / 100)))


def iterations(pps, seconds):
    """Messages for a paced round of about `seconds` at `pps` (the same on both sides)."""
    return max(MIN_ITERS, int(round(pps * seconds)))


def rate_flags(tool, pps, arrivals="constant"):
    """The pacing flags of `tool` at `pps` messages per second (perftest's on both its
    sides, rdmasweep's on its client)."""
    if tool == "perftest":
        return [f"--rate_limit={pps}", "--rate_units=p", "--rate_limit_type=SW", "--burst_size=1"]
    return ["--rate", f"{pps}pps", "--arrivals", arrivals]


def error_pct(achieved_mmsg, pps):
    """How far an achieved rate (M msg/s, as both tools' results give it) is from the
    offered one, in percent."""
    return (achieved_mmsg * 1e6 / pps - 1) * 100


def row(name, share, pps, arrivals, runs):
    """One paced point's summary: each tool's achieved rates and errors, their medians,
    and whether rdmasweep's median error is within WITHIN_PCT. A run's error is against
    the rate its schedule offered where it says so (rdmasweep's offered_items_per_second:
    `pps` with constant arrivals; with Poisson ones, the mean of the gaps its messages
    spanned), else against `pps` (perftest)."""
    r = {"point": name, "share_pct": share, "offered_per_second": pps, "arrivals": arrivals}
    for tool, results in runs.items():
        achieved = [x["Mmsg/s"] * 1e6 for x in results]
        r[tool + "_achieved_rounds"] = achieved
        r[tool + "_offered_rounds"] = [x.get("offered/s", pps) for x in results]
        r[tool + "_error_pct_rounds"] = [error_pct(a / 1e6, o) for a, o in zip(achieved, r[tool + "_offered_rounds"])]
        r[tool + "_error_pct"] = statistics.median(r[tool + "_error_pct_rounds"]) if achieved else None
        if tool == "rdmasweep":  # its late posts, and of those the ones a full QP held
            r["rdmasweep_late_rounds"] = [x.get("late", 0) for x in results]
            r["rdmasweep_late_qp_full_rounds"] = [x.get("late-qp-full", 0) for x in results]
    e = r.get("rdmasweep_error_pct")
    r["rdmasweep_within"] = e is not None and abs(e) <= WITHIN_PCT
    return r


def print_rows(rows):
    print("\npacing: offered message rate (Poisson: what rdmasweep's schedule offered, the mean of its gaps), "
          "each tool's achieved rate against it (median of the rounds), error = achieved / offered - 1; "
          "rdmasweep's late posts in the round of the median error, and of those the ones whose QP was full "
          "when due (the device behind, not the loop)")
    print(f"{'point':26} {'share':>5} {'arrivals':8} {'offered/s':>10} {'perftest/s':>11} {'error':>7} "
          f"{'rdmasweep/s':>11} {'error':>7}  within {WITHIN_PCT:g} %  {'late':>6} {'QP full':>7}")
    for r in rows:
        cells = []
        for tool in ("perftest", "rdmasweep"):
            a = r.get(tool + "_achieved_rounds") or []
            if not a:
                cells.append(f"{'-':>11} {'-':>7}")
                continue
            cells.append(f"{statistics.median(a):11.0f} {r[tool + '_error_pct']:+6.2f}%")
        offered = r["offered_per_second"]
        if r["arrivals"] == "poisson" and r.get("rdmasweep_offered_rounds"):  # its schedule's own mean
            offered = int(round(statistics.median(r["rdmasweep_offered_rounds"])))
        late = ""
        errs = r.get("rdmasweep_error_pct_rounds") or []
        if errs and r.get("rdmasweep_late_rounds"):
            i = sorted(range(len(errs)), key=errs.__getitem__)[(len(errs) - 1) // 2]  # the median round
            late = f"{r['rdmasweep_late_rounds'][i]:6.0f} {r['rdmasweep_late_qp_full_rounds'][i]:7.0f}"
        print(f"{r['point']:26} {r['share_pct']:4g}% {r['arrivals']:8} {offered:10d} "
              f"{cells[0]} {cells[1]}  {'yes' if r['rdmasweep_within'] else 'NO ':3}     {late}".rstrip())
