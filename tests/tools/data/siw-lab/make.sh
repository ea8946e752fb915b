#!/bin/bash
# How the files beside this script were made (docs/charts.md, "Two devices, two histories"):
#   tools/rxe-lab --provider siw -- tests/tools/data/siw-lab/make.sh
# 8 runs of the history sweep on Soft-iWARP (siw0) in the lab VM: the same host, peer
# and sweep as tests/tools/data/noise-lab, another device.
# The results land in reports/siw-lab/ (gzip them here to update the test data).
exec "$(dirname "$0")/../history-sweep.sh" siw-lab 8
