"""Write the vectors that ship with saturate (``sources/shipped/wikipedia.minilm.npz``, read by
``sources/shipped_vectors.py``): the embedded corpus embedded afresh by the default model, in a temporary data
directory, then quantized with its manifest. Run it when the default model, the corpus package or
``vectors.DOC_CHARS`` change (tests/test_shipped_vectors.py fails until then):

    python training/ship_vectors.py            # ~1 min on 2 cores
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from saturate.graph.embeddings import build_embeddings
from saturate.sources.shipped_vectors import SHIPPED_DIR, write
from saturate.sources.vectors import VERSION, VectorIndex, doc_text
from saturate.sources.wiki import open_wiki
from saturate.state.settings import load_settings


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python training/ship_vectors.py", description=(__doc__ or "").splitlines()[0])
    p.add_argument("--out", default=str(SHIPPED_DIR / "wikipedia.minilm.npz"))
    args = p.parse_args(argv)
    model, identity = build_embeddings(load_settings({}, env={}))
    with tempfile.TemporaryDirectory() as tmp:
        corpus = open_wiki(tmp)
        rows = list(corpus._titles_and_texts())
        assert corpus.index_path is not None  # opened with an index folder
        index = VectorIndex.open_or_build(
            corpus.index_path, corpus.count, lambda: iter(rows), model, identity, shipped=False
        )
        out = write(Path(args.out), index.vectors, identity, (doc_text(t, x) for t, x in rows), VERSION)
    print(f"{out}: {corpus.count:,} vectors of {identity}, {out.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
