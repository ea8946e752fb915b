#!/bin/bash
# How the files beside this script were made (docs/charts.md, "Results over time"):
#   tools/rxe-lab -- tests/tools/data/history-lab/make.sh
# 16 runs of the history sweep in the rxe lab VM, runs 11 to 16 with two CPU hogs
# beside client and server: a deliberate slowdown for tools/history to find.
# The results land in reports/history-lab/ (gzip them here to update the test data).
exec "$(dirname "$0")/../history-sweep.sh" history-lab 16 11
