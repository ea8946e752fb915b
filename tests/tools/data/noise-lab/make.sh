#!/bin/bash
# How the files beside this script were made (docs/charts.md, "The lab's noise"):
#   tools/rxe-lab -- tests/tools/data/noise-lab/make.sh
# 40 runs of the history sweep in the rxe lab VM, nothing else running: the noise
# that tests/tools/test_history.py plants its steps in.
# The results land in reports/noise-lab/ (gzip them here to update the test data).
exec "$(dirname "$0")/../history-sweep.sh" noise-lab 40
