#!/usr/bin/env bash
# Reproduce the shipped reader's weights (nodes/reading/model/reader.json) from the named public data: docs/reader.md.
#
#   training/reproduce.sh DATA_DIR      (in the venv of the README's first command: nothing more to install)
#
# DATA_DIR holds the training inputs (their sources and sha256 are in docs/reader.md):
#   webq-trainmodel.json, webq-val.json  brmson/dataset-factoid-webquestions main/trainmodel.json, main/val.json
#   curated-train.tsv                    brmson/dataset-factoid-curated curated-train.tsv
# The evaluation data (../shared/data, or EVAL_DATA) is read only to drop any training question equal to one of it.
# About 15 minutes on 2 cores: the sessions ~12 min, the fit ~3 min.
set -euo pipefail
cd "$(dirname "$0")/.."
data=${1:?usage: training/reproduce.sh DATA_DIR}
eval_data=${EVAL_DATA:-../shared/data}
py=${PYTHON:-.venv/bin/python}
"$py" training/sessions.py --exclude "$eval_data" --out "$data/webq-sessions.jsonl" \
  "$data/webq-trainmodel.json" "$data/webq-val.json" "$data/curated-train.tsv"
"$py" training/fit_reader.py --exclude "$eval_data" --sessions "$data/webq-sessions.jsonl" --out nodes/reading/model
sha256sum nodes/reading/model/reader.json
