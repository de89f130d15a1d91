"""Source tiers of evidence for a claim: a hit's weight comes from its source's tier.

Tiers go by registrable domain (``bbc.co.uk``, ``nasa.gov``; public-suffix aware,
private suffixes such as ``github.io`` kept apart): primary (official bodies,
peer-reviewed venues; also the subject's own site — a domain named in the
claim) 1.0, wire services 0.8, trade/specialist press 0.6, other ≤ 0.4. The
built-in table below can be extended or overridden with a JSON file
(``source_tiers`` setting); the weights per tier are the ``tier_weights`` setting.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from urllib.parse import urlsplit

from saturate.state.records import Tier

# Suffixes of official bodies: any domain under them is primary.
PRIMARY_SUFFIXES = (
    "gov",
    "mil",
    "int",
    "edu",
    "gov.uk",
    "ac.uk",
    "nhs.uk",
    "gouv.fr",
    "gob.es",
    "gv.at",
    "gov.au",
    "edu.au",
    "gc.ca",
    "europa.eu",
    "bund.de",
    "admin.ch",
)
DEFAULT_TIERS: dict[str, Tier] = {
    # official bodies and peer-reviewed venues
    "who.int": "primary",
    "un.org": "primary",
    "worldbank.org": "primary",
    "imf.org": "primary",
    "oecd.org": "primary",
    "nature.com": "primary",
    "science.org": "primary",
    "sciencedirect.com": "primary",
    "springer.com": "primary",
    "wiley.com": "primary",
    "thelancet.com": "primary",
    "nejm.org": "primary",
    "bmj.com": "primary",
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
    # wire services
    "reuters.com": "wire",
    "apnews.com": "wire",
    "afp.com": "wire",
    "bloomberg.com": "wire",
    "dpa.com": "wire",
    "efe.com": "wire",
    "ansa.it": "wire",
    "pa.media": "wire",
    "upi.com": "wire",
    "xinhuanet.com": "wire",
    # trade / specialist press and reference works with editorial control
    "britannica.com": "trade",
    "nationalgeographic.com": "trade",
    "scientificamerican.com": "trade",
    "newscientist.com": "trade",
    "space.com": "trade",
    "arstechnica.com": "trade",
    "wired.com": "trade",
    "techcrunch.com": "trade",
    "theverge.com": "trade",
    "economist.com": "trade",
    "ft.com": "trade",
    "wsj.com": "trade",
    "nytimes.com": "trade",
    "theguardian.com": "trade",
    "bbc.co.uk": "trade",
    "bbc.com": "trade",
    "statnews.com": "trade",
    "healthline.com": "trade",
    "mayoclinic.org": "trade",
    "webmd.com": "trade",
    "variety.com": "trade",
    "hollywoodreporter.com": "trade",
    "billboard.com": "trade",
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


def load_tier_table(path: str | None) -> dict[str, str]:
    """The built-in table, extended/overridden by the JSON file at ``path`` (re-read when it changes)."""
    try:
        stamp = Path(path).stat().st_mtime_ns if path else None
    except OSError:
        stamp = None
    return _tier_table(path, stamp)


@functools.lru_cache(maxsize=8)
def _tier_table(path: str | None, stamp: int | None) -> dict[str, str]:
    table = dict(DEFAULT_TIERS)
    if path:
        try:
            extra = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(f"source_tiers file {path}: {exc}") from None
        bad = (
            {d: t for d, t in extra.items() if t not in ("primary", "wire", "trade", "other")}
            if isinstance(extra, dict)
            else extra
        )
        if bad:
            raise ValueError(
                f"source_tiers file {path}: expected {{domain: primary|wire|trade|other}}, bad entries {bad}"
            )
        table.update({d.lower(): t for d, t in extra.items()})
    return table


def tier_of(domain: str, claim: str = "", table: dict[str, str] | None = None) -> tuple[str, str]:
    """(tier, why) for a registrable domain."""
    table = DEFAULT_TIERS if table is None else table
    if domain in table:
        return table[domain], "tier table"
    if any(domain == s or domain.endswith("." + s) for s in PRIMARY_SUFFIXES):
        return "primary", "official suffix"
    label = domain.split(".")[0]
    if len(label) >= 4 and label in claim.lower().replace(" ", "").replace("-", ""):
        return "primary", "the subject's own site (its name is in the claim)"
    return "other", "not in the tier table"
