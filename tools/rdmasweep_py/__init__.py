"""rdmasweep's Python tools' modules, used by tools/plot, tools/compare and
tools/vs-perftest (installed together under share/rdmasweep/tools/):

  common         error exit, argparse with one-line errors, re-running a script
                 under a Python that has matplotlib or scipy (stdlib only)
  results        loading result files into points, their metrics (stdlib only)
  charts         chart plumbing: matplotlib setup, Series, line_chart
  metric_charts  bandwidth, message rate, latency, CQ depth, CPU cost, counters
  spread_charts  fairness, per-QP bars, latency histogram and CDF
  mesh           rank x rank heatmaps of `rdmasweep mesh` results
  thread_charts  message rate vs threads, each thread's own rate
  timeline       throughput over each --interval of a point
  hunt_charts    the explored space of an `rdmasweep hunt` and its anomalies
  report         the self-contained HTML report
  export         tools/export's tables: a row per repetition, CSV and markdown (stdlib only)

The scripts find the package because Python puts a script's own directory
(symlinks resolved) first on the module search path. Importing the package
imports nothing.
"""
