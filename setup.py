"""Which folders make the package `saturate`: the one thing pyproject.toml cannot say statically.

In a checkout `saturate/` holds a link to each engine folder at the root (saturate/graph -> ../graph, nodes,
sources, state), so `saturate.graph` is `graph/` for Python, pyright and editors alike, and setuptools copies the
files the links lead to. A checkout made without symlinks (Git for Windows' default, `core.symlinks=false`) has a
small text file holding "../graph" in place of each link: the sub-packages are then mapped onto the folders
(`package_dir`), so the wheel holds the same files either way. Anything else refuses to build, saying what to do.
Everything else about the package is in pyproject.toml.
"""

from __future__ import annotations

import os
from pathlib import Path

LINKED = ("graph", "nodes", "sources", "state")
# folders of data inside the package (no __init__.py: nothing to import), declared as packages so that setuptools
# ships their files (pyproject.toml's package-data) without warning "Package would be ignored" for each of them
DATA_PACKAGES = ("saturate.nodes.reading.model", "saturate.sources.shipped")


class LayoutError(SystemExit):
    """The checkout cannot be built into a complete package."""


def layout(root: Path) -> tuple[dict[str, str], list[str]]:
    """``(package_dir, packages)`` for the checkout at ``root``."""
    from setuptools import find_packages  # follows the links (os.walk with followlinks)

    front = root / "saturate"
    packages = find_packages(where=str(root), include=["saturate", "saturate.*"])
    if all((front / name).is_dir() for name in LINKED):
        # the links work: package_dir "" = "." makes the editable install a plain path that static tools follow
        return {"": "."}, [*packages, *DATA_PACKAGES]
    package_dir = {"saturate": "saturate"}
    for name in LINKED:
        link, target = front / name, root / name
        written = link.read_text(encoding="utf-8", errors="replace").strip() if link.is_file() else None
        if written != f"../{name}" or not (target / "__init__.py").is_file():
            raise LayoutError(
                f"cannot build saturate: saturate/{name} should be a link to ../{name} (found "
                f"{'nothing' if not link.exists() else repr((written or '')[:40])}). Clone with symlinks enabled "
                f"(git clone -c core.symlinks=true; on Windows turn on Developer Mode first), or restore the file "
                f"with `git checkout -- saturate/{name}` (docs/development.md)."
            )
        package_dir[f"saturate.{name}"] = name
        packages += [f"saturate.{name}", *(f"saturate.{name}.{p}" for p in find_packages(where=str(target)))]
    return package_dir, [*packages, *DATA_PACKAGES]


if __name__ == "__main__":  # setuptools' build backend runs this file as __main__
    from setuptools import setup

    package_dir, packages = layout(Path(os.path.dirname(os.path.abspath(__file__))))
    setup(package_dir=package_dir, packages=packages)
