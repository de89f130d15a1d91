"""LocalCorpus: SQLite FTS5 BM25 search over a JSONL file or a folder of .md/.txt files.

A ``.md`` file is indexed as the text it shows, not its Markdown syntax (``markdown_text``: headings,
emphasis, links, lists, tables and code keep their words, lose their marks), so no "# Zorblax" reaches
a snippet or an answer; ``.txt`` files are indexed as they are.

The index is built once into an SQLite file named after the corpus (its absolute
path, size and mtime, plus INDEX_VERSION), so a changed corpus gets a fresh
index and an unchanged one is reused. Builds go to a temp file that is moved
into place with ``os.replace``: a crash mid-build never leaves a half index.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import html.parser
import json
import os
import re
import sqlite3
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Self
from urllib.parse import quote

from saturate.sources import vector_files
from saturate.sources.vectors import VectorIndex, unit
from saturate.state.errors import BadInput
from saturate.state.files import MAX_LINE_BYTES, bounded_lines, bounded_text, regular_file, user_path
from saturate.state.records import SearchResult
from saturate.state.text import clip, lone_surrogate, terms

# 2: the index records probe terms its open checks (see _probe_terms); 3: .md files are indexed as text
INDEX_VERSION = 3
PROBE_TERMS = 8
SNIPPET_CHARS = 500
MAX_QUERY_TERMS = 64  # longer queries keep their first 64 distinct terms
FOLDER_SUFFIXES = (".md", ".txt")
RANK = "bm25(2.0, 1.0)"  # FTS5 rank function: title weighted twice the text
HYBRID_DEPTH = 50  # candidates each side (words, meaning) brings to the fused ranking
QUESTION_VECTORS = 8  # meaning(): the questions whose vectors are remembered (a session's task and its parts)

Record = tuple[str, str, str, str]  # id, url, title, text


class CorpusError(BadInput):
    """The corpus is missing, empty or malformed; the message names the path (and line)."""


class IndexFolderError(CorpusError):
    """The index folder (``index`` in the data directory) cannot be used: a fault of the data directory, not of the
    corpus, so no message about it names the ``corpus`` setting."""


class LocalCorpus:
    """A SearchSource over a local corpus indexed with SQLite FTS5 (BM25, title weighted 2:1).

    Build or reuse one with ``open`` (a JSONL file or folder) or ``from_records``.
    One instance may be shared by threads (one connection behind a lock).
    """

    def __init__(self, db: sqlite3.Connection, name: str, index_path: Path | None = None, built: bool = False):
        self._db = db
        self._lock = threading.Lock()
        self.corpus_name = name
        self.name = f"local:{name}"
        self.index_path = index_path
        self.built = built  # True when this open (re)built the index
        self.count = _check_index(db, index_path or ":memory:")
        self.notes: list[str] = []  # what happened to the index (rebuilt after damage ...), for the session's notes
        self._rebuild = None  # set by open_keyed: rebuilds the index file from the corpus
        self._vectors: VectorIndex | None = None  # attach_vectors: retrieval by meaning as well as words
        self._embedder: Any = None  # a LangChain Embeddings (embed_query, embed_documents) once vectors are attached
        self.hybrid_weight = 1.0
        self.name_detail = "lexical (BM25)"
        self.vector_identity: str | None = None  # the model of the stored vectors (re-ranking may share them)
        self._question_vectors: dict[str, Any] = {}  # meaning(): the last questions embedded (a session asks again)

    # --- constructors ---------------------------------------------------------

    @classmethod
    def open(cls, corpus_path: Path | str, index_dir: Path | str) -> Self:
        """Index ``corpus_path`` (JSONL, a folder of notes, or one .md/.txt note) into ``index_dir`` once; reuse it
        while unchanged."""
        if not str(corpus_path).strip():
            raise CorpusError("the corpus path is empty: name a JSONL file or a folder (or leave it unset)")
        try:
            path = user_path(corpus_path, "corpus", CorpusError, resolve=True)
            if not path.exists():
                raise CorpusError(f"corpus not found: {path}")
            if not path.is_dir():  # a device (/dev/zero), a pipe: refused at once, never read
                regular_file(path, "corpus", CorpusError)
            name = path.stem if path.is_file() else path.name
            key = corpus_fingerprint(path)
        except OSError as err:  # a name too long, a permission denied on a parent ...
            raise CorpusError(f"cannot open corpus {str(corpus_path)[:200]!r}: {err.strerror or err}") from None
        if path.is_dir():
            loader = lambda: read_folder(path)  # noqa: E731 - the three loaders side by side
        elif path.suffix.lower() in FOLDER_SUFFIXES:  # one note: a corpus of one document, read as a folder's are
            loader = lambda: read_folder(path.parent, [path])  # noqa: E731
        else:
            loader = lambda: read_jsonl(path)  # noqa: E731
        return cls.open_keyed(loader, name, index_dir, slot=str(path), key=key, where=str(path))

    @classmethod
    def from_records(cls, records: Iterable[Mapping], name: str, index_dir: Path | str | None = None) -> Self:
        """Index records ({id, title, text[, url]}) given in memory.

        Without ``index_dir`` the index lives in memory; with it, the index file is
        keyed by the records' content.
        """
        rows = list(records)
        if index_dir is None:
            db = sqlite3.connect(":memory:", check_same_thread=False)
            _build(db, _records(rows, name, f"<records {name}>"), f"<records {name}>")
            return cls(db, name, built=True)
        key = hashlib.sha256(json.dumps(rows, sort_keys=True, default=str).encode()).hexdigest()
        return cls.open_keyed(lambda: rows, name, index_dir, slot=f"records:{name}", key=key)

    @classmethod
    def open_keyed(
        cls,
        load: Callable[[], Iterable[Mapping]],
        name: str,
        index_dir: Path | str,
        *,
        slot: str,
        key: str,
        where: str | None = None,
    ) -> Self:
        """Reuse the index of ``slot`` (a corpus identity) at version ``key``, or build it from ``load()``.

        ``load`` is only called when the index must be (re)built; older indexes of
        the same slot are removed after a rebuild.
        """
        index_dir = user_path(index_dir, "the index folder", IndexFolderError)
        try:
            index_dir.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            why = "a file, not a folder" if index_dir.is_file() else (err.strerror or err)
            raise IndexFolderError(f"cannot create the index folder {index_dir}: {why}") from None
        stem = f"{_safe_name(name)}-{_digest(slot)[:8]}"
        index_path = index_dir / f"{stem}-{_digest(f'{INDEX_VERSION}|{key}')[:16]}.sqlite"
        _remove_stale_builds(index_dir)
        where = where or name

        def build(reason: str | None = None) -> Self:
            _build_file(index_path, _records(load(), name, where), where)
            for old in index_dir.glob(f"{stem}-*.sqlite"):
                if old != index_path:
                    old.unlink(missing_ok=True)
                    vector_files.remove_all(old)  # the old version's vectors go with it (not one being built)
            corpus = cls(_connect_ro(index_path), name, index_path, built=True)
            if reason:
                corpus.notes.append(f"index {index_path.name} was unreadable ({reason}): rebuilt from {where}")
            return corpus

        if index_path.exists():
            try:
                corpus = cls(_connect_ro(index_path), name, index_path)
            except CorpusError as err:  # unreadable or foreign file: derived data, rebuilt (noted)
                corpus = build(str(err))
        else:
            corpus = build()
        corpus._rebuild = build
        return corpus

    # --- SearchSource -----------------------------------------------------------

    def match(self, query: str) -> str:
        """The FTS5 MATCH expression for a query (all columns; TitleCorpus narrows it)."""
        return match_expression(query)

    def query_key(self, query: str) -> str:
        """What this source searches for a query's words (its MATCH expression): a "simplified" retry that keeps the
        same terms asks for the same words, so round 1 takes the first query's next ranks instead of a second
        search (by meaning too, the simplified words say nothing the question did not)."""
        return self.match(query)

    def search(self, query: str, k: int) -> list[SearchResult]:
        if k <= 0:
            return []
        expr = self.match(query)
        if self._vectors is None:
            return [r for r, _ in self._lexical(expr, k)] if expr else []
        return self._hybrid(query, expr, k, self._vectors)

    def _lexical(self, expr: str, k: int) -> list[tuple[SearchResult, int]]:
        """(result, rowid) of the BM25 ranking, best first."""
        rows = self._guarded(lambda: self._query(expr, k))
        return [(self._result(row[1:-1], -row[-1]), row[0]) for row in rows]

    def _bm25(self, expr: str, depth: int) -> dict[int, float]:
        """{rowid: BM25 score} of the ``depth`` best, nothing else read (the fused ranking's lexical side)."""
        sql = "SELECT rowid, rank FROM fts WHERE fts MATCH ? ORDER BY rank LIMIT ?"

        def ask() -> list[tuple]:
            with self._lock:
                return self._db.execute(sql, (expr, depth)).fetchall()

        return {row: -rank for row, rank in self._guarded(ask)}

    def _guarded(self, ask: Callable[[], list[tuple]]) -> list[tuple]:
        try:
            return ask()
        except sqlite3.DatabaseError as err:
            if self._rebuild is None:
                raise
            # a damaged index is derived data: rebuilt once from the corpus (noted), then asked again
            fresh = self._rebuild(f"{type(err).__name__}: {err}")
            with self._lock:
                self._db.close()
                self._db, self._rebuild = fresh._db, None
                self.notes += fresh.notes
            return ask()

    def _result(self, row: tuple, score: float) -> SearchResult:
        doc_id, url, title, head, length = row
        snippet = clip(head, SNIPPET_CHARS)
        if length > len(head) and not snippet.endswith("…"):  # whitespace-heavy head: use it all
            snippet = clip(self._text(doc_id), SNIPPET_CHARS)
        return SearchResult(id=doc_id, url=url, title=title, snippet=snippet, source=self.name, score=score)

    def _query(self, expr: str, k: int) -> list[tuple]:
        with self._lock:
            return self._db.execute(
                # rank is configured as bm25(fts, 2.0, 1.0) at build; ORDER BY rank lets FTS5
                # sort internally (about twice as fast as ORDER BY bm25(...) with a join)
                "SELECT d.rowid, d.id, d.url, d.title, substr(d.text, 1, ?), length(d.text), fts.rank "
                "FROM fts JOIN docs d ON d.rowid = fts.rowid WHERE fts MATCH ? ORDER BY fts.rank LIMIT ?",
                (SNIPPET_CHARS * 4, expr, k),
            ).fetchall()

    # --- retrieval by meaning ---------------------------------------------------------------------------------

    def attach_vectors(
        self,
        embedder,
        identity: str,
        weight: float,
        progress: Callable[[int, int], None] | None = None,
        shipped: bool = True,
    ) -> None:
        """Rank by meaning as well as by words: the documents' vectors under ``embedder`` (a LangChain
        Embeddings; ``identity`` names the model) are built once beside the index or reused
        (``sources/vectors.py``; with ``shipped``, vectors that came with saturate for exactly this corpus and model are
        taken); ``weight`` is the lexical share of the fused score (``_hybrid``)."""
        if self.index_path is None:  # an in-memory index: vectors in memory too
            raise CorpusError("retrieval by meaning needs an index on disk (open the corpus with an index folder)")
        self._vectors = VectorIndex.open_or_build(
            self.index_path, self.count, self._titles_and_texts, embedder, identity, progress, shipped
        )
        if self._vectors.remark:
            self.notes.append(self._vectors.remark)
        self._embedder, self.hybrid_weight = embedder, weight
        self._question_vectors = {}  # of the model before
        self.name_detail = f"hybrid: {identity}"
        self.vector_identity = identity

    def _titles_and_texts(self) -> Iterator[tuple[str, str]]:
        with self._lock:
            rows = self._db.execute("SELECT title, text FROM docs ORDER BY rowid").fetchall()
        yield from rows

    def _hybrid(self, query: str, expr: str, k: int, vectors: VectorIndex) -> list[SearchResult]:
        """BM25 and cosine fused: each side's best ``HYBRID_DEPTH`` candidates, each score min-max normalised over
        the candidates (a document one side did not find scores 0 there), ``weight`` x lexical + (1 - weight) x
        dense. Normalised scores, not ranks: a name that matches exactly (a peaked BM25 ranking) keeps its lead,
        a question worded unlike its answer is carried by meaning. The query cannot be embedded (the model
        failed): the BM25 ranking alone, noted."""
        depth = max(k, HYBRID_DEPTH)
        lex_score = self._bm25(expr, depth) if expr else {}
        try:
            qvec = self._question_vector(query)
        except Exception as err:  # noqa: BLE001 - any model failure: words alone, noted (failure is data)
            self.notes.append(f"query not embedded ({type(err).__name__}: {err}): ranked by words alone")
            return [r for r, _ in self._lexical(expr, k)] if expr else []
        dense = [i + 1 for i, _ in vectors.top(qvec, depth)]  # vector row i is the document of rowid i + 1
        rows = list(dict.fromkeys([*lex_score, *dense]))
        cos = dict(zip(rows, (vectors.vectors[[row - 1 for row in rows]] @ qvec).tolist()))
        lo_l, hi_l = (min(lex_score.values()), max(lex_score.values())) if lex_score else (0.0, 0.0)
        lo_d, hi_d = min(cos.values()), max(cos.values())

        def norm(v: float, lo: float, hi: float) -> float:
            return (v - lo) / (hi - lo) if hi > lo else 1.0

        w = self.hybrid_weight
        fused = {
            row: w * (norm(lex_score[row], lo_l, hi_l) if row in lex_score else 0.0)
            + (1 - w) * norm(cos[row], lo_d, hi_d)
            for row in rows
        }
        best = sorted(rows, key=lambda row: (-fused[row], row))[:k]
        with self._lock:  # only the k best are read
            heads = self._db.execute(
                f"SELECT rowid, id, url, title, substr(text, 1, ?), length(text) FROM docs "
                f"WHERE rowid IN ({','.join('?' * len(best))})",
                (SNIPPET_CHARS * 4, *best),
            ).fetchall()
        found = {row[0]: self._result(row[1:], round(fused[row[0]], 6)) for row in heads}
        return [found[row] for row in best if row in found]

    def vectors_of(self, ids: list[str]) -> dict[str, list[float]]:
        """The stored vectors of these documents (re-ranking and embedding novelty share them: no text is embedded
        twice); {} without vectors."""
        if self._vectors is None or not ids:
            return {}
        out: dict[str, list[float]] = {}
        ids = list(dict.fromkeys(ids))
        with self._lock:
            for i in range(0, len(ids), 500):
                part = ids[i : i + 500]
                rows = self._db.execute(
                    f"SELECT id, rowid FROM docs WHERE id IN ({','.join('?' * len(part))})", part
                ).fetchall()
                out.update({doc_id: self._vectors.vectors[row - 1].tolist() for doc_id, row in rows})
        return out

    def meaning(self, question: str, ids: list[str], identity: str) -> dict[str, float]:
        """The cosine between ``question`` and each of these documents' stored vectors, embedded by the model the
        vectors are of; {} unless the stored vectors are of the model ``identity`` names (what the reader's
        calibration was fitted with: ``reading.reader``) or the question cannot be embedded. Costs one embedding
        of the question (remembered for the next calls) and a lookup."""
        if self._vectors is None or self.vector_identity != identity or not ids:
            return {}
        try:
            qvec = self._question_vector(question)
        except Exception:  # noqa: BLE001 - any model failure: the reader reads without the meaning (as before)
            return {}
        return {doc_id: round(float(qvec @ unit(v)), 6) for doc_id, v in self.vectors_of(ids).items()}

    def _question_vector(self, text: str):
        """The unit vector of ``text`` under the stored vectors' model, remembered for the last few texts: a
        session's first search is its task, which the reader's ``meaning`` asks for again."""
        qvec = self._question_vectors.get(text)
        if qvec is None:
            qvec = unit(self._embedder.embed_query(text))
            with self._lock:
                if len(self._question_vectors) >= QUESTION_VECTORS:
                    self._question_vectors.pop(next(iter(self._question_vectors)))
                self._question_vectors[text] = qvec
        return qvec

    def fetch(self, result: SearchResult) -> str:
        """Title + blank line + text of the document with ``result.id``; KeyError if unknown."""
        with self._lock:
            row = self._db.execute("SELECT title, text FROM docs WHERE id = ?", (result.id,)).fetchone()
        if row is None:
            raise KeyError(f"{self.name}: no document with id {result.id!r}")
        return f"{row[0]}\n\n{row[1]}"

    def documents(self, ids: list[str]) -> dict[str, str]:
        """The texts of the documents with these ids (one query; unknown ids are left out). A local corpus holds its
        documents, so reading them whole costs a lookup, not a fetch: the slot filler and the answer read them."""
        out: dict[str, str] = {}
        ids = list(dict.fromkeys(ids))
        with self._lock:
            for i in range(0, len(ids), 500):  # SQLite's host-parameter limit
                part = ids[i : i + 500]
                rows = self._db.execute(
                    f"SELECT id, text FROM docs WHERE id IN ({','.join('?' * len(part))})", part
                ).fetchall()
                out.update(dict(rows))
        return out

    def _text(self, doc_id: str) -> str:
        with self._lock:
            return self._db.execute("SELECT text FROM docs WHERE id = ?", (doc_id,)).fetchone()[0]

    def drain_notes(self) -> list[str]:
        """The notes not yet reported, once each (a session records them as fallbacks)."""
        with self._lock:
            notes, self.notes = self.notes, []
        return notes

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __repr__(self) -> str:
        return f"LocalCorpus({self.name!r}, {self.count} docs, index={str(self.index_path or ':memory:')!r})"


# --- query ------------------------------------------------------------------------


def match_expression(query: str) -> str:
    """An FTS5 MATCH expression: distinct content terms, each double-quoted, joined with OR.

    User text never reaches MATCH raw, so FTS syntax in a query (``"``, ``AND``,
    ``(``, ``NEAR``, ``col:``) is searched as words or dropped, never parsed.
    """
    distinct = list(dict.fromkeys(terms(query)))[:MAX_QUERY_TERMS]
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in distinct)


# --- reading corpora ----------------------------------------------------------------


def corpus_fingerprint(path: Path) -> str:
    """Absolute path + size + mtime of the file (of every .md/.txt file for a folder)."""
    if path.is_file():
        st = path.stat()
        return f"{path}|{st.st_size}|{st.st_mtime_ns}"
    parts = [str(path)]
    for f in _folder_files(path):
        st = f.stat()
        parts.append(f"{f.relative_to(path).as_posix()}|{st.st_size}|{st.st_mtime_ns}")
    return "\n".join(parts)


def read_jsonl(path: Path) -> Iterator[dict]:
    """Records of a JSONL corpus; CorpusError naming the line for anything malformed. Read a line at a time with a
    bound on its length (``state/files.py``): a device such as /dev/zero or a file without line breaks is refused,
    never read into memory whole."""
    for n, line in bounded_lines(path, "corpus", CorpusError):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except (json.JSONDecodeError, RecursionError) as err:
            why = err.msg if isinstance(err, json.JSONDecodeError) else "nested too deeply"
            raise CorpusError(f"{path}: line {n} is not valid JSON ({why})") from None
        if not isinstance(rec, dict):
            raise CorpusError(f"{path}: line {n} is not a JSON object")
        if bad := lone_surrogate(line, rec):
            raise CorpusError(f"{path}: line {n} holds {bad}, half of a surrogate pair: not Unicode text")
        missing = [f for f in ("id", "title", "text") if f not in rec]
        if missing:
            raise CorpusError(f"{path}: line {n} lacks {', '.join(missing)} (needs id, title, text)")
        rec["_where"] = f"{path}: line {n}"
        yield rec


def read_folder(path: Path, files: list[Path] | None = None) -> Iterator[dict]:
    """Records of a folder of .md/.txt files (or of ``files`` in it: a single note given as the corpus): id =
    relative path; a .md file's text is ``markdown_text`` of it and its title its first level-1 heading (``# Title``
    or underlined ``===``); otherwise the title is the file stem."""
    for f in _folder_files(path) if files is None else files:
        # bounded as a JSONL record's line is (a 4 GB note is refused, not read whole); the line breaks as
        # read_text gave them (\r\n and \r as \n), so a note indexes as before
        text = bounded_text(f, "corpus file", CorpusError, max_bytes=MAX_LINE_BYTES)
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        title = ""
        if f.suffix.lower() == ".md":
            text, title = markdown_text(text)
        yield {"id": f.relative_to(path).as_posix(), "title": title or f.stem, "text": text, "_where": str(f)}


@functools.cache
def _markdown():
    """CommonMark with GitHub's tables and strikethrough; the parser only (nothing is rendered to HTML)."""
    # heavy: markdown-it-py, only for a corpus of .md files (a session on another corpus does not import it)
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable(["table", "strikethrough"])


# YAML front matter (Jekyll, Hugo, Obsidian): metadata, not text. markdown-it-py's front_matter plugin lives in
# mdit-py-plugins, a dependency for one regular expression; the block is dropped here.
_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n.*?\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.S)
_BLOCK_END = {  # a blank line after each (a paragraph, a heading, a whole list or table, a code or HTML block)
    *("paragraph_close", "heading_close", "bullet_list_close", "ordered_list_close", "table_close"),
    *("fence", "code_block", "html_block"),
}


def markdown_text(source: str) -> tuple[str, str]:
    """(text, title) of a Markdown document: the words it shows, a line per block and a blank line after each
    paragraph, with no Markdown syntax (heading and list marks, emphasis, link targets, table pipes, code fences,
    HTML tags and comments); a table row is one line, its cells two spaces apart. The title is the text of the
    first level-1 heading ("" without one). Parsed with markdown-it-py."""
    lines: list[str] = []
    row: list[str] | None = None  # the cells of the table row being read
    title, heading = "", ""
    for tok in _markdown().parse(_FRONT_MATTER.sub("", source, count=1)):
        kind = tok.type
        if kind == "heading_open":
            heading = tok.tag
        elif kind == "tr_open":
            row = []
        elif kind == "inline":
            words = _inline_text(tok.children or [])
            if heading == "h1" and not title:
                title = " ".join(words.split())
            (row if row is not None else lines).append(words)
        elif kind in ("fence", "code_block"):
            lines.append(tok.content.rstrip("\n"))
        elif kind == "html_block":
            lines.append(_html_text(tok.content))
        elif kind == "tr_close" and row is not None:
            lines.append("  ".join(c.strip() for c in row))
            row = None
        if kind in _BLOCK_END and not tok.hidden:  # a tight list's paragraphs are hidden: its items stay together
            heading = ""
            if lines and lines[-1]:
                lines.append("")
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip(), title


def _inline_text(children: list) -> str:
    """The words of an inline run: text, code spans and image descriptions; marks, link targets and HTML tags go."""
    out = []
    for child in children:
        if child.type in ("text", "code_inline"):
            out.append(child.content)
        elif child.type == "image":
            out.append(_inline_text(child.children or []))
        elif child.type in ("softbreak", "hardbreak"):
            out.append("\n")
    return "".join(out)


class _HtmlWords(html.parser.HTMLParser):
    """The text of an HTML block in a Markdown file (tags and comments dropped; entities decoded)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.words: list[str] = []

    def handle_data(self, data: str) -> None:
        self.words.append(data)


def _html_text(block: str) -> str:
    parser = _HtmlWords()
    parser.feed(block)
    parser.close()
    return " ".join("".join(parser.words).split())


def _folder_files(path: Path) -> list[Path]:
    return sorted(
        f
        for f in path.rglob("*")
        if f.suffix.lower() in FOLDER_SUFFIXES
        and f.is_file()
        and not any(p.startswith(".") for p in f.relative_to(path).parts)
    )


def _records(records: Iterable[Mapping], name: str, where: str) -> Iterator[Record]:
    """Validate and normalise records to (id, url, title, text) rows."""
    seen: set[str] = set()
    for i, rec in enumerate(records, start=1):
        if not isinstance(rec, Mapping):
            raise CorpusError(f"{where}: record {i} is not a mapping")
        at = rec.get("_where") or f"{where}: record {i}"
        if any(f not in rec for f in ("id", "title", "text")):
            raise CorpusError(f"{at}: a record needs id, title and text")
        doc_id, title, text, url = rec["id"], rec["title"], rec["text"], rec.get("url")
        if not isinstance(doc_id, (str, int)) or isinstance(doc_id, bool) or str(doc_id) == "":
            raise CorpusError(f"{at}: id must be a non-empty string or integer (got {doc_id!r})")
        if not isinstance(title, str) or not isinstance(text, str):
            raise CorpusError(f"{at}: title and text must be strings")
        if url is not None and not isinstance(url, str):
            raise CorpusError(f"{at}: url must be a string (got {url!r})")
        if url and not re.match(r"https?://[^\s/?#]+", url, re.IGNORECASE):  # javascript:, data:, file: ... no
            raise CorpusError(f"{at}: url must be an http(s) link (got {url[:80]!r})")
        doc_id = str(doc_id)
        if doc_id in seen:
            raise CorpusError(f"{at}: duplicate id {doc_id!r}")
        seen.add(doc_id)
        yield doc_id, url or f"local://{name}/{quote(doc_id, safe='/')}", title, text


# --- the index ---------------------------------------------------------------------

_SCHEMA = """
CREATE TABLE docs (rowid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, url TEXT NOT NULL,
                   title TEXT NOT NULL, text TEXT NOT NULL);
CREATE VIRTUAL TABLE fts USING fts5(title, text, content='docs', content_rowid='rowid',
                                    tokenize='unicode61 remove_diacritics 2');
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
"""


def _build(db: sqlite3.Connection, rows: Iterable[Record], where: str) -> int:
    """Create the tables and bulk insert in one transaction; returns the document count."""
    db.executescript(_SCHEMA)
    with db:
        db.executemany("INSERT INTO docs (id, url, title, text) VALUES (?, ?, ?, ?)", rows)
        (count,) = db.execute("SELECT count(*) FROM docs").fetchone()
        if not count:
            raise CorpusError(f"corpus is empty: {where}")
        db.execute("INSERT INTO fts (rowid, title, text) SELECT rowid, title, text FROM docs")
        db.execute(f"INSERT INTO fts (fts, rank) VALUES ('rank', '{RANK}')")
        db.execute("INSERT INTO fts (fts) VALUES ('optimize')")
        probe = json.dumps(_probe_terms(db))
        db.executemany(
            "INSERT INTO meta VALUES (?, ?)",
            [("version", str(INDEX_VERSION)), ("count", str(count)), ("probe", probe)],
        )
    return count


def _probe_terms(db: sqlite3.Connection) -> dict[str, int]:
    """``PROBE_TERMS`` terms spread evenly over the index's sorted vocabulary, with how many documents match each.

    Opening the index asks them again (``_check_index``): a damaged full-text index (garbage in its
    segments while the tables still open) answers differently and is rebuilt, instead of every search
    quietly returning nothing. A sample, so cheap (one MATCH each, well under a millisecond): damage
    confined to one unprobed posting list passes, and a search that then fails is rebuilt once
    (``LocalCorpus.search``). FTS5's own ``integrity-check`` needs a writable connection and reads the whole
    index, which a read-only open of the shared index cannot afford.
    """
    db.execute("CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, fts, 'row')")
    try:
        (n,) = db.execute("SELECT count(*) FROM temp.vocab").fetchone()
        step = max(1, n // PROBE_TERMS)
        rows = db.execute(
            "SELECT term, doc FROM (SELECT term, doc, row_number() OVER (ORDER BY term) - 1 AS i FROM temp.vocab) "
            "WHERE i % ? = 0 LIMIT ?",
            (step, PROBE_TERMS),
        ).fetchall()
    finally:
        db.execute("DROP TABLE temp.vocab")
    return dict(rows)


def _remove_stale_builds(index_dir: Path) -> None:
    """Remove ``*.building`` files of index builds that died (a killed process leaves its temp file behind).

    A running build holds an exclusive lock on its file (``fcntl.flock``, released by the OS when the
    process dies), so a file whose lock can be taken is stale; another process's running build is kept.
    A vector file being written (``<index>.vec-….building``) is the vectors' own, cleared under their lock
    (``sources/vectors.py``): never touched here.
    """
    for tmp in index_dir.glob("*.building"):
        if ".vec-" in tmp.name:
            continue
        try:
            with open(tmp, "rb") as fh:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                tmp.unlink(missing_ok=True)
        except OSError:  # locked by a running build (or already gone): leave it
            continue


def _build_file(index_path: Path, rows: Iterable[Record], where: str) -> None:
    """Build into a temp file beside ``index_path``, then move it into place atomically.

    The temp file is locked while the build runs (see ``_remove_stale_builds``)."""
    fd, tmp = tempfile.mkstemp(dir=index_path.parent, prefix=index_path.stem + ".", suffix=".building")
    lock = os.fdopen(fd, "rb")
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        db = sqlite3.connect(tmp)
        try:
            db.execute("PRAGMA journal_mode = OFF")
            db.execute("PRAGMA synchronous = OFF")
            _build(db, rows, where)
        finally:
            db.close()
        os.replace(tmp, index_path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
        lock.close()


def _connect_ro(index_path: Path) -> sqlite3.Connection:
    try:
        return sqlite3.connect(index_path.resolve().as_uri() + "?mode=ro", uri=True, check_same_thread=False)
    except sqlite3.Error as err:
        raise CorpusError(f"cannot open index {index_path}: {err}") from None


def _check_index(db: sqlite3.Connection, index_path: Path | str) -> int:
    try:
        meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
        if meta.get("version") != str(INDEX_VERSION):
            raise CorpusError(f"index {index_path} has version {meta.get('version')}, expected {INDEX_VERSION}")
        for term, docs in json.loads(meta["probe"]).items():
            (got,) = db.execute("SELECT count(*) FROM fts WHERE fts MATCH ?", (_quoted(term),)).fetchone()
            if got != docs:
                raise CorpusError(f"index {index_path} is damaged: {term!r} matches {got} documents, not {docs}")
        return int(meta["count"])
    except CorpusError:
        db.close()
        raise
    except (sqlite3.Error, KeyError, ValueError) as err:
        db.close()
        raise CorpusError(f"index {index_path} is unreadable: {err}") from None


def _quoted(term: str) -> str:
    """A vocabulary term as an FTS5 string (one term, whatever its characters)."""
    return '"' + term.replace('"', '""') + '"'


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _safe_name(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:60] or "corpus"
