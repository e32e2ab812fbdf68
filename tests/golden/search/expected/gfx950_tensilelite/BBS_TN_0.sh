#!/bin/bash
# Benchmark BBS_TN_0.yaml with the Tensile benchmark driver (written by tensilekit).
# TENSILE: the driver; hipBLASLt: tensilelite/Tensile/bin/Tensile, ROCm/Tensile: Tensile/bin/Tensile.
set -euo pipefail
cd "$(dirname "$0")"
NAME="BBS_TN_0"
"${TENSILE:-Tensile}" "$NAME.yaml" "build_$NAME" 2>&1 | tee "$NAME.log"
