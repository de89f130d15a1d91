"""Source tiers of evidence for a claim: a hit's weight comes from its source's tier.

Tiers go by registrable domain (``bbc.co.uk``, ``nasa.gov``; public-suffix aware,
private suffixes such as ``github.io`` kept apart), as the design specifies:
primary 1.0, wire services 0.8, trade/specialist press 0.6, other ≤ 0.4 (the
weights are the ``tier_weights`` setting). How a domain gets its tier, first
match wins:

1. the ``source_tiers`` JSON file, when set (it extends and overrides the table);
2. the built-in table below (``DEFAULT_TIERS``): international bodies and
   peer-reviewed venues (journals, publishers, preprint servers, proceedings)
   primary; wire services (Reuters, AP, AFP, dpa, EFE, ANSA, Kyodo, PA, UPI ...)
   wire; major newspapers and broadcasters with an editorial line, specialist
   magazines and edited reference works trade;
3. an **official or academic public suffix**: ``.gov``, ``.mil``, ``.int``,
   ``.edu`` and any country's official or academic second level (``gov.uk``,
   ``gouv.fr``, ``gob.mx``, ``go.jp``, ``govt.nz``, ``gv.at``, ``mil.br``,
   ``ac.uk``, ``ac.jp``, ``edu.au`` ...) → primary;
4. the subject's own site — a domain whose name (4+ letters) is in the claim → primary;
5. anything else → other.

The data at hand (recorded web hits of annotated claims) cannot test the tiers:
its annotators labelled each claim from these very passages, whatever their
source. The table is the design's, kept as specified.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

from saturate.state.errors import BadInput
from saturate.state.files import bounded_text
from saturate.state.records import Tier

TIERS = ("primary", "wire", "trade", "other")

# Top-level domains of official bodies and US universities: any domain under them is primary.
OFFICIAL_TLDS = frozenset({"gov", "mil", "int", "edu"})
# A country's official or academic second level (gov.uk, ac.jp, gob.mx ...): the first label of a public suffix.
OFFICIAL_SECOND_LEVEL = frozenset({"gov", "gouv", "gob", "go", "govt", "gv", "mil", "ac", "edu", "govern"})
# Official domains outside those suffixes.
PRIMARY_SUFFIXES = ("nhs.uk", "europa.eu", "bund.de", "admin.ch", "gc.ca", "canada.ca", "parliament.uk")
DEFAULT_TIERS: dict[str, Tier] = {
    # international bodies and statistics offices
    "who.int": "primary",
    "un.org": "primary",
    "worldbank.org": "primary",
    "imf.org": "primary",
    "oecd.org": "primary",
    "unesco.org": "primary",
    "unicef.org": "primary",
    "ipcc.ch": "primary",
    "iaea.org": "primary",
    "wto.org": "primary",
    # peer-reviewed venues: journals, publishers, proceedings, preprint servers
    "nature.com": "primary",
    "science.org": "primary",
    "sciencedirect.com": "primary",
    "elsevier.com": "primary",
    "springer.com": "primary",
    "wiley.com": "primary",
    "thelancet.com": "primary",
    "nejm.org": "primary",
    "bmj.com": "primary",
    "jamanetwork.com": "primary",
    "plos.org": "primary",
    "frontiersin.org": "primary",
    "mdpi.com": "primary",
    "acm.org": "primary",
    "ieee.org": "primary",
    "jstor.org": "primary",
    "cell.com": "primary",
    "pnas.org": "primary",
    "oup.com": "primary",
    "cambridge.org": "primary",
    "tandfonline.com": "primary",
    "sagepub.com": "primary",
    "annualreviews.org": "primary",
    "acs.org": "primary",
    "rsc.org": "primary",
    "aps.org": "primary",
    "iop.org": "primary",
    "biomedcentral.com": "primary",
    "aclanthology.org": "primary",
    "neurips.cc": "primary",
    "openreview.net": "primary",
    "arxiv.org": "primary",
    "biorxiv.org": "primary",
    "medrxiv.org": "primary",
    "ssrn.com": "primary",
    "cochranelibrary.com": "primary",
    # wire services
    "reuters.com": "wire",
    "apnews.com": "wire",
    "ap.org": "wire",
    "afp.com": "wire",
    "bloomberg.com": "wire",
    "dpa.com": "wire",
    "dpa-international.com": "wire",
    "efe.com": "wire",
    "ansa.it": "wire",
    "pa.media": "wire",
    "upi.com": "wire",
    "xinhuanet.com": "wire",
    "kyodonews.net": "wire",
    "aap.com.au": "wire",
    "thecanadianpress.com": "wire",
    "ptinews.com": "wire",
    "aa.com.tr": "wire",
    "tass.com": "wire",
    # major news with an editorial line, specialist press, edited reference works
    "nytimes.com": "trade",
    "washingtonpost.com": "trade",
    "wsj.com": "trade",
    "ft.com": "trade",
    "economist.com": "trade",
    "theguardian.com": "trade",
    "bbc.co.uk": "trade",
    "bbc.com": "trade",
    "npr.org": "trade",
    "pbs.org": "trade",
    "cbc.ca": "trade",
    "abc.net.au": "trade",
    "aljazeera.com": "trade",
    "latimes.com": "trade",
    "usatoday.com": "trade",
    "cnn.com": "trade",
    "cbsnews.com": "trade",
    "nbcnews.com": "trade",
    "politico.com": "trade",
    "theatlantic.com": "trade",
    "newyorker.com": "trade",
    "time.com": "trade",
    "lemonde.fr": "trade",
    "spiegel.de": "trade",
    "faz.net": "trade",
    "elpais.com": "trade",
    "corriere.it": "trade",
    "nhk.or.jp": "trade",
    "scmp.com": "trade",
    "thehindu.com": "trade",
    "britannica.com": "trade",
    "nationalgeographic.com": "trade",
    "scientificamerican.com": "trade",
    "newscientist.com": "trade",
    "space.com": "trade",
    "livescience.com": "trade",
    "arstechnica.com": "trade",
    "wired.com": "trade",
    "techcrunch.com": "trade",
    "theverge.com": "trade",
    "statnews.com": "trade",
    "healthline.com": "trade",
    "mayoclinic.org": "trade",
    "clevelandclinic.org": "trade",
    "webmd.com": "trade",
    "variety.com": "trade",
    "hollywoodreporter.com": "trade",
    "billboard.com": "trade",
    "rollingstone.com": "trade",
    "espn.com": "trade",
    "imdb.com": "trade",
    "history.com": "trade",
    "smithsonianmag.com": "trade",
}


@functools.lru_cache(maxsize=1)
def _extractor():
    import tldextract  # imported on first use: only claims need registrable domains

    # the bundled public-suffix snapshot: no network at run time
    return tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None, include_psl_private_domains=True)


def registrable_domain(url: str) -> str:
    host = (urlsplit(url).hostname or "").lower().rstrip(".")
    if not host:
        return ""
    parts = _extractor()(host)
    top = getattr(parts, "top_domain_under_public_suffix", None)
    if top is None:  # tldextract < 5.2
        top = parts.registered_domain
    return top or host


def load_tier_table(path: str | None) -> dict[str, Tier]:
    """The built-in table, extended/overridden by the JSON file at ``path`` (re-read when it changes)."""
    try:
        stamp = Path(path).stat().st_mtime_ns if path else None
    except OSError:
        stamp = None
    return _tier_table(path, stamp)


class SourceTiersError(BadInput):
    """The ``source_tiers`` file is missing or malformed (the settings check it first; it may change since)."""


@functools.lru_cache(maxsize=8)
def _tier_table(path: str | None, stamp: int | None) -> dict[str, Tier]:
    table = dict(DEFAULT_TIERS)
    if path:
        text = bounded_text(path, "source_tiers file", SourceTiersError)  # the settings' bound: it may change since
        try:
            extra = json.loads(text)
        except (ValueError, RecursionError) as exc:
            why = exc if isinstance(exc, ValueError) else "nested too deeply"
            raise SourceTiersError(f"source_tiers file {path}: {why}") from None
        bad = [d for d, t in extra.items() if t not in TIERS] if isinstance(extra, dict) else None
        if bad is None or bad:
            raise SourceTiersError(
                f"source_tiers file {path}: expected {{domain: primary|wire|trade|other}}"
                + (f", bad entries {', '.join(bad[:3])}" if bad else "")
            )
        table.update({d.lower(): t for d, t in extra.items()})
    return table


def official(domain: str) -> bool:
    """Rule 3 (and the official domains of ``PRIMARY_SUFFIXES``): the domain's public suffix is an official
    or academic one."""
    if any(domain == s or domain.endswith("." + s) for s in PRIMARY_SUFFIXES):
        return True
    suffix = _extractor()(domain).suffix.lower().split(".")
    if suffix == [""]:
        return False
    if len(suffix) == 1:
        return suffix[0] in OFFICIAL_TLDS
    return suffix[0] in OFFICIAL_SECOND_LEVEL or suffix[0] in OFFICIAL_TLDS


def tier_of(domain: str, claim: str = "", table: Mapping[str, Tier] | None = None) -> tuple[Tier, str]:
    """(tier, why) for a registrable domain."""
    table = DEFAULT_TIERS if table is None else table
    if domain in table:
        return table[domain], "tier table"
    if official(domain):
        return "primary", "official or academic suffix"
    label = domain.split(".")[0]
    if len(label) >= 4 and label in claim.lower().replace(" ", "").replace("-", ""):
        return "primary", "the subject's own site (its name is in the claim)"
    return "other", "not in the tier table"
