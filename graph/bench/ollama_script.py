"""An HTTP server speaking Ollama's API (/api/tags, /api/chat NDJSON, /api/embed) that answers from a script.

Used offline by the tests and by `saturate bench model`: the real ChatOllama and OllamaEmbeddings clients
talk to it over HTTP on 127.0.0.1, and the requests it received can be inspected (model, options, prompts,
texts). Embeddings are deterministic: a hashed bag of words (``embed_vector``), so texts sharing words are
close.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from saturate.graph import build, build_multi  # noqa: F401  (loads every node, so every prompt is registered)
from saturate.nodes._model import PROMPTS


def role_of(request: dict) -> str:
    """Which prompt a request carries (its ``Prompt.name``: plan, gap, novelty, compress, decide, stance,
    proof, source_decision), recognised by the prompt's own system text; "other" for anything else."""
    system = next((m["content"] for m in request.get("messages", []) if m.get("role") == "system"), "")
    return next((name for name, prompt in PROMPTS.items() if system.startswith(prompt.marker)), "other")


def embed_vector(text: str, dim: int = 64) -> list[float]:
    """A deterministic unit vector for ``text``: its lower-cased words hashed into ``dim`` signed buckets."""
    vec = [0.0] * dim
    for word in re.findall(r"\w+", text.lower()):
        h = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "big")
        vec[h % dim] += 1.0 if (h >> 32) & 1 else -1.0
    norm = math.sqrt(sum(x * x for x in vec))
    return [x / norm for x in vec] if norm else [1.0] + [0.0] * (dim - 1)


class OllamaScript:
    """Replies per role: a list consumed in order (the last one repeats), each a str, a dict
    {"status": 500} / {"sleep": s, "text": ...} / {"drip": s, "text": ...}, or a callable(request) returning
    one of those. A drip sends the reply's body one byte every ``s`` seconds (a server that defeats per-read
    timeouts) and records in ``drips`` how many bytes of how many it sent and why it stopped ("done", "client
    gone" or "server closed").

    ``models`` is what /api/tags lists (chat and embedding models alike; /api/embed refuses any other, as
    Ollama does). /api/embed requests are kept in ``embed_requests`` and answered with ``embed_vector``
    (``embed_dim`` dimensions) unless an ``embed`` role is scripted ({"status": ...} / {"sleep": s}).
    """

    def __init__(self, models=("qwen-test:latest",), embed_dim: int = 64, **replies):
        self.models = list(models)
        self.embed_dim = embed_dim
        self.replies = {k: list(v) if isinstance(v, (list, tuple)) else [v] for k, v in replies.items()}
        self.requests: list[dict] = []
        self.embed_requests: list[dict] = []
        self.drips: list[dict] = []
        self.closed = threading.Event()  # set when the server shuts down: a drip stops
        self.lock = threading.Lock()

    def next_reply(self, role: str, request: dict | None = None):
        with self.lock:
            queue = self.replies.get(role) or ["5"]
            reply = queue.pop(0) if len(queue) > 1 else queue[0]
        return reply(request) if callable(reply) else reply

    def by_role(self, role: str) -> list[dict]:
        return [r for r in self.requests if role_of(r) == role]


def _handler(script: OllamaScript):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # quiet
            pass

        def _json(self, status: int, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.path == "/api/tags":
                tags = [
                    {"name": m, "model": m, "digest": hashlib.sha256(m.encode()).hexdigest()} for m in script.models
                ]
                self._json(200, {"models": tags})
            else:
                self._json(404, {"error": "not found"})

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            if self.path == "/api/embed":
                self._embed(body)
                return
            if self.path != "/api/chat":
                self._json(404, {"error": "not found"})
                return
            with script.lock:
                script.requests.append(body)
            reply = script.next_reply(role_of(body), body)
            if isinstance(reply, dict) and "status" in reply:
                self._json(reply["status"], {"error": reply.get("error", "internal server error")})
                return
            drip = reply.get("drip") if isinstance(reply, dict) else None
            if isinstance(reply, dict) and "sleep" in reply:
                time.sleep(reply["sleep"])
            if isinstance(reply, dict):
                reply = reply.get("text", "")
            text = str(reply)
            prompt_tokens = sum(len(m.get("content", "").split()) for m in body.get("messages", []))
            base = {"model": body.get("model"), "created_at": "2026-11-22T00:00:00Z"}
            chunks = [
                {**base, "message": {"role": "assistant", "content": text}, "done": False},
                {
                    **base,
                    "message": {"role": "assistant", "content": ""},
                    "done": True,
                    "done_reason": "stop",
                    "prompt_eval_count": prompt_tokens,
                    "eval_count": max(1, len(text.split())),
                },
            ]
            try:
                if drip is not None:
                    self._drip(
                        chunks if body.get("stream", True) else [{**chunks[1], "message": chunks[0]["message"]}], drip
                    )
                elif body.get("stream", True):
                    data = b"".join(json.dumps(c).encode() + b"\n" for c in chunks)
                    self.send_response(200)
                    self.send_header("Content-Type", "application/x-ndjson")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                else:
                    self._json(200, {**chunks[1], "message": chunks[0]["message"]})
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout tests)
                pass

        def _drip(self, chunks: list[dict], seconds_per_byte: float) -> None:
            """The body one byte at a time, ``seconds_per_byte`` apart; how it went is kept in ``script.drips``."""
            data = b"".join(json.dumps(c).encode() + b"\n" for c in chunks)
            record = {"sent": 0, "of": len(data), "stopped": ""}
            with script.lock:
                script.drips.append(record)
            self.send_response(200)
            self.send_header("Content-Type", "application/x-ndjson")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            try:
                for i in range(len(data)):
                    if script.closed.wait(seconds_per_byte):
                        record["stopped"] = "server closed"
                        return
                    self.wfile.write(data[i : i + 1])
                    self.wfile.flush()
                    record["sent"] = i + 1
                record["stopped"] = "done"
            except (BrokenPipeError, ConnectionResetError):
                record["stopped"] = "client gone"

        def _embed(self, body: dict) -> None:
            with script.lock:
                script.embed_requests.append(body)
            model = body.get("model", "")
            if model not in script.models and f"{model}:latest" not in script.models:
                self._json(404, {"error": f'model "{model}" not found, try pulling it first'})
                return
            reply = script.next_reply("embed", body) if "embed" in script.replies else None
            if isinstance(reply, dict) and "status" in reply:
                self._json(reply["status"], {"error": reply.get("error", "internal server error")})
                return
            if isinstance(reply, dict) and "sleep" in reply:
                time.sleep(reply["sleep"])
            texts = body.get("input", "")
            texts = [texts] if isinstance(texts, str) else list(texts)
            try:
                self._json(
                    200,
                    {
                        "model": model,
                        "embeddings": [embed_vector(t, script.embed_dim) for t in texts],
                        "prompt_eval_count": sum(len(t.split()) for t in texts),
                    },
                )
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout tests)
                pass

    return Handler


class OllamaServer:
    def __init__(self, script: OllamaScript):
        self.script = script
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(script))
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> OllamaServer:
        self.script.closed.clear()
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.script.closed.set()
        self.httpd.shutdown()
        self.httpd.server_close()
