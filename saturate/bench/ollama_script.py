"""An HTTP server speaking Ollama's API (/api/tags, /api/chat NDJSON, /api/embed) and the OpenAI API of local
servers (/v1/models, /v1/chat/completions, /v1/embeddings, llama.cpp's /props) that answers from a script.

Used offline by the tests and by `saturate bench model`: the real ChatOllama, OllamaEmbeddings, ChatOpenAI and
OpenAIEmbeddings clients talk to it over HTTP on 127.0.0.1, and the requests it received can be inspected
(model, options, schema, prompts, texts). Embeddings are deterministic: a hashed bag of words
(``embed_vector``), so texts sharing words are close.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
import struct
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

    A reply may also be {"html": True} (a proxy's HTML page instead of JSON), {"status": 429, "retry_after": s}
    (a rate limit) or {"thinking": "...", "text": ...} (Ollama's separate thinking field).

    ``models`` is what /api/tags and /v1/models list (chat and embedding models alike; /api/embed refuses any
    other, as Ollama does). For the OpenAI protocol: ``api_key`` (None: any key) is the key the server expects,
    else HTTP 401 echoing the key it was sent (as some servers do); ``model_info`` extra fields of each /v1/models
    entry (``{"max_model_len": 4096}``, vLLM's context); ``props`` what llama.cpp's /props answers (None: 404);
    ``refuse_schema`` answers a request carrying ``response_format`` with HTTP 400, as servers without
    structured output do (an int: that status, for the OpenAI ``json_schema`` form only; 500 answers as
    llama-cpp-python's server does, with a multi-line error whose reason is past its first line, and takes the
    schema in its own ``json_object`` form). ``n_ctx``: the context of an OpenAI-protocol server that does not report
    it (llama-cpp-python): a chat request whose messages (a token per 3 bytes) and ``max_tokens`` exceed it is refused
    with HTTP 400 and the OpenAI wording, "maximum context length is N tokens", as llama-cpp-python does. /api/embed
    requests are kept in ``embed_requests`` and
    answered with ``embed_vector`` (``embed_dim`` dimensions) unless an ``embed`` role is scripted
    ({"status": ...} / {"sleep": s}).
    """

    def __init__(
        self,
        models=("qwen-test:latest",),
        embed_dim: int = 64,
        *,
        api_key: str | None = None,
        model_info: dict | None = None,
        props: dict | None = None,
        refuse_schema: bool | int = False,
        n_ctx: int | None = None,
        models_delay_s: float = 0.0,
        **replies,
    ):
        self.models = list(models)
        self.embed_dim = embed_dim
        self.api_key, self.model_info, self.props, self.refuse_schema = api_key, model_info or {}, props, refuse_schema
        self.n_ctx = n_ctx
        self.models_delay_s = models_delay_s  # /v1/models answers after this long (a one-slot server still busy)
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

        def _json(self, status: int, body: dict, headers: dict | None = None) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _authorized(self) -> bool:
            """The OpenAI protocol's key check: HTTP 401 echoing the key sent, when it is not ``api_key``."""
            sent = self.headers.get("Authorization", "").removeprefix("Bearer ").strip()
            if script.api_key is None or sent == script.api_key:
                return True
            self._json(401, {"error": {"message": f"Incorrect API key provided: {sent}", "type": "invalid_api_key"}})
            return False

        def _html(self, status: int = 200) -> None:
            data = b"<!DOCTYPE html><html><body><h1>Welcome</h1><p>This is not an API.</p></body></html>"
            self.send_response(status)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.path == "/v1/models":
                time.sleep(script.models_delay_s)
                if self._authorized():
                    entries = [
                        {"id": m, "object": "model", "owned_by": "script", **script.model_info} for m in script.models
                    ]
                    self._json(200, {"object": "list", "data": entries})
            elif self.path == "/props" and script.props is not None:
                self._json(200, script.props)
            elif self.path == "/api/tags":
                tags = [
                    {"name": m, "model": m, "digest": hashlib.sha256(m.encode()).hexdigest()} for m in script.models
                ]
                self._json(200, {"models": tags})
            else:
                self._json(404, {"error": "not found"})

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            if self.path in ("/v1/chat/completions", "/v1/embeddings"):
                if self._authorized():
                    (self._openai_chat if self.path.endswith("completions") else self._openai_embed)(body)
                return
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
            if isinstance(reply, dict) and reply.get("html"):
                self._html()
                return
            drip = reply.get("drip") if isinstance(reply, dict) else None
            if isinstance(reply, dict) and "sleep" in reply:
                time.sleep(reply["sleep"])
            thinking = reply.get("thinking") if isinstance(reply, dict) else None
            if isinstance(reply, dict):
                reply = reply.get("text", "")
            text = str(reply)
            prompt_tokens = sum(len(m.get("content", "").split()) for m in body.get("messages", []))
            base = {"model": body.get("model"), "created_at": "2026-11-22T00:00:00Z"}
            message = {"role": "assistant", "content": text} | ({"thinking": thinking} if thinking else {})
            chunks = [
                {**base, "message": message, "done": False},
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

        def _openai_chat(self, body: dict) -> None:
            with script.lock:
                script.requests.append(body)
            if script.n_ctx is not None:
                size = sum(len(str(m.get("content", "")).encode()) for m in body.get("messages", [])) // 3
                wanted = size + int(body.get("max_tokens") or 0)
                if wanted > script.n_ctx:
                    message = (
                        f"This model's maximum context length is {script.n_ctx} tokens. However, you requested "
                        f"{wanted} tokens. Please reduce the length of the messages or completion."
                    )
                    self._json(400, {"error": {"message": message, "type": "invalid_request_error"}})
                    return
            kind = (body.get("response_format") or {}).get("type")
            code = 400 if script.refuse_schema is True else int(script.refuse_schema)
            if code and kind and not (code != 400 and kind == "json_object"):
                if code == 400:
                    message, kind = "response_format is not supported by this server", "invalid_request_error"
                    self._json(400, {"error": {"message": message, "type": kind}})
                else:
                    message = "Internal Server Error\nTraceback: ...\nValueError: no grammar for the JSON schema"
                    self._json(code, {"error": {"message": message, "type": "server_error"}})
                return
            reply = script.next_reply(role_of(body), body)
            if isinstance(reply, dict) and "status" in reply:
                headers = {"Retry-After": str(reply["retry_after"])} if "retry_after" in reply else {}
                self._json(reply["status"], {"error": {"message": reply.get("error", "server error")}}, headers)
                return
            if isinstance(reply, dict) and reply.get("html"):
                self._html()
                return
            if isinstance(reply, dict) and "sleep" in reply:
                time.sleep(reply["sleep"])
            text = str(reply.get("text", "") if isinstance(reply, dict) else reply)
            prompt_tokens = sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))
            completion = {
                "id": "chatcmpl-script",
                "object": "chat.completion",
                "created": 1795000000,
                "model": body.get("model"),
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": max(1, len(text.split())),
                    "total_tokens": prompt_tokens + max(1, len(text.split())),
                },
            }
            try:
                self._json(200, completion)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout tests)
                pass

        def _openai_embed(self, body: dict) -> None:
            with script.lock:
                script.embed_requests.append(body)
            if body.get("model") not in script.models:
                self._json(404, {"error": {"message": f"model {body.get('model')!r} not found"}})
                return
            texts = body.get("input", "")
            texts = [texts] if isinstance(texts, str) else list(texts)
            rows = []
            for i, t in enumerate(texts):
                vector = embed_vector(str(t), script.embed_dim)
                if body.get("encoding_format") == "base64":  # what the openai client asks for by default
                    vector = base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()
                rows.append({"object": "embedding", "index": i, "embedding": vector})
            tokens = sum(len(str(t).split()) for t in texts)
            self._json(
                200,
                {
                    "object": "list",
                    "data": rows,
                    "model": body.get("model"),
                    "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
                },
            )

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
