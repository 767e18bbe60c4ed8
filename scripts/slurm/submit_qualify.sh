#!/usr/bin/env bash
# Fleet qualification through Slurm (docs/qualify.md, "A fleet"): a job array running `bench
# qualify` once per node (or per GPU), then one job merging their reports.
#
#   XB_FLEET_DIR=/shared/xb-fleet scripts/slurm/submit_qualify.sh NODES [SBATCH_OPTION...]
#
# NODES: how many array tasks. XB_PER=node (default): one task per node, each with every GPU of
# the node (--nodes=1 --exclusive --gres=gpu:${XB_GPUS_PER_NODE:-8}), which runs `bench qualify
# --devices all`, so a node's GPUs are qualified one after the other and compared side by side.
# XB_PER=gpu: one task per GPU (--gres=gpu:1), Slurm packing tasks onto nodes. Further arguments go
# to both sbatch calls (e.g. --partition=h200 --time=01:00:00). XB_BENCH, XB_SUITE, XB_BASELINE,
# XB_DEVICES: see qualify_array.sbatch. Prints the two job ids; the report ends up in
# $XB_FLEET_DIR/aggregate/. XB_GRES=none leaves --gres out (machines without GPU scheduling).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tasks=${1:?usage: XB_FLEET_DIR=DIR $0 NODES [SBATCH_OPTION...]}
shift
[[ $tasks =~ ^[1-9][0-9]*$ ]] || { echo "submit_qualify.sh: NODES must be a positive integer, not '$tasks'" >&2; exit 2; }
: "${XB_FLEET_DIR:?set XB_FLEET_DIR to a folder every node can write}"
mkdir -p "$XB_FLEET_DIR"
export XB_FLEET_DIR XB_BENCH=${XB_BENCH:-$(pwd)/build/bench}
per=${XB_PER:-node}
case $per in
  node) shape=(--nodes=1 --exclusive); gres="gpu:${XB_GPUS_PER_NODE:-8}" ;;
  gpu) shape=(--ntasks=1); gres="gpu:1" ;;
  *) echo "submit_qualify.sh: XB_PER must be node or gpu, not '$per'" >&2; exit 2 ;;
esac
[ "${XB_GRES:-}" = none ] || shape+=(--gres="$gres")
array=$(sbatch --parsable --export=ALL --array="0-$((tasks - 1))" "${shape[@]}" \
  --chdir="$(pwd)" --output="$XB_FLEET_DIR/%x-%A_%a.out" "$@" "$here/qualify_array.sbatch")
array=${array%%;*}
agg=$(sbatch --parsable --export=ALL --dependency="afterany:$array" --chdir="$(pwd)" \
  --output="$XB_FLEET_DIR/%x-%j.out" "$@" "$here/aggregate.sbatch")
agg=${agg%%;*}
echo "array job $array ($tasks task(s), one per $per), aggregation job $agg: report in $XB_FLEET_DIR/aggregate/"
