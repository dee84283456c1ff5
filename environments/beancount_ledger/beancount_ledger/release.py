"""The signed release manifest and the admission rule that serving applies.

A release is the set of keyed selectors that passed the preflight (`preflight.py`), recorded in a
JSON manifest with, per selector, the SHA-256 digest of its task data and its public id, plus the
versions it was certified under. The body is signed with HMAC-SHA256 under the evaluator secret.
The manifest lives with the operator (default ``~/.piv/beancount-ledger/manifest.json``); it is
never part of the package.

`admit` is the serving door's rule: the shipped world needs nothing; keyed selectors need the
secret and a manifest whose signature verifies, whose versions match this package, and which
lists every selector asked for. `dev:<n>` worlds are never released.

The development override (``PIV_DEV_UNMANIFESTED=1``) admits keyed and ``dev`` selectors without
a manifest, and only when this package is imported from its source tree (next to its own
``tests/conftest.py`` and ``pyproject.toml``): an installed copy ignores it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from piv_core.parsing.bounded_decode import OPERATOR_FILE_MAX_DEPTH, Undecodable, load_json
from piv_core.runs.files import read_text

from beancount_ledger import contract, keys
from beancount_ledger.keys import Refused

MANIFEST_SCHEMA = 1
DEFAULT_MANIFEST = "~/.piv/beancount-ledger/manifest.json"
OVERRIDE_ENV = "PIV_DEV_UNMANIFESTED"
_SOURCE_ROOT = Path(__file__).resolve().parent.parent
MAX_MANIFEST_BYTES = 64 << 20
"""The largest manifest read (64 MiB, some 200,000 records); it is decoded only when nested at
most `piv_core.parsing.bounded_decode.OPERATOR_FILE_MAX_DEPTH` deep."""


def canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def digest(value: Any) -> str:
    """SHA-256 of `value`'s canonical JSON."""
    return hashlib.sha256(canonical(value)).hexdigest()


@lru_cache(maxsize=1)
def versions() -> dict[str, Any]:
    """What a release is certified under; any difference refuses it."""
    return {
        "manifest_schema": MANIFEST_SCHEMA,
        **contract.VERSIONS,
        "episode_digest": contract.episode_digest()["digest"],
    }


def source_checkout() -> bool:
    """True when this package is imported from its repository (its tests beside it), not installed."""
    project = _SOURCE_ROOT / "pyproject.toml"
    return (
        (_SOURCE_ROOT / "tests" / "conftest.py").is_file()
        and project.is_file()
        and 'name = "beancount-ledger"' in project.read_text()
    )


def override_active() -> bool:
    return os.environ.get(OVERRIDE_ENV) == "1" and source_checkout()


def manifest_path(configured: str | None) -> Path:
    return Path(configured or DEFAULT_MANIFEST).expanduser()


def sign(body: dict[str, Any], secret: bytes) -> str:
    return hmac.new(secret, canonical(body), hashlib.sha256).hexdigest()


def write_manifest(path: Path, records: dict[str, dict[str, Any]], secret: bytes, **extra: Any) -> Path:
    """Write a signed manifest of `records` (selector -> record with at least 'digest')."""
    body = {
        "schema": MANIFEST_SCHEMA,
        "versions": versions(),
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        **extra,
        "records": records,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"body": body, "signature": sign(body, secret)}, indent=1, sort_keys=True))
    tmp.replace(path)
    return path


def read_manifest(path: Path, secret: bytes) -> dict[str, dict[str, Any]]:
    """The records of the manifest at `path`, once its signature and versions check out."""
    if not path.is_file():
        raise Refused(
            "not in the manifest",
            f"no release manifest at {path}; write one with `beancount-ledger-preflight` "
            "or point the taskset knob `manifest` at it",
        )
    try:
        text = read_text(path, MAX_MANIFEST_BYTES)
        document = load_json(
            text, max_depth=OPERATOR_FILE_MAX_DEPTH, max_bytes=MAX_MANIFEST_BYTES, where=str(path)
        )
        body, signature = document["body"], document["signature"]
    except Undecodable as error:
        raise Refused(
            "manifest signature invalid", f"{path} is not a signed manifest ({error.reason})"
        ) from None
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise Refused("manifest signature invalid", f"{path} is not a signed manifest ({error})") from None
    if not isinstance(signature, str) or not hmac.compare_digest(signature, sign(body, secret)):
        raise Refused(
            "manifest signature invalid",
            f"{path} was not signed with this evaluator secret, or was altered after signing",
        )
    theirs, ours = body.get("versions", {}), versions()
    changed = sorted(k for k in ours if theirs.get(k) != ours[k])
    if changed:
        detail = ", ".join(f"{k} {theirs.get(k)!r} -> {ours[k]!r}" for k in changed)
        raise Refused(
            "version mismatch", f"{path} certifies another release ({detail}); run the preflight again"
        )
    return body["records"]


def public_id(files: dict[str, str]) -> str:
    """A world's public name, a digest of the public files' bytes (nothing secret goes in)."""
    return "bl-" + digest(sorted(files.items()))[:16]


CERTIFIED = ("id", "public_id", "name", "system_prompt", "prompt", "files", "balances", "fixes", "period_end")
"""The task data fields a manifest record's digest covers."""


def task_digest(data: Any) -> str:
    """What the manifest certifies for a selector: every byte of the task data (`LedgerData`) that
    defines it, not the position a taskset gives it."""
    return digest(data.model_dump(mode="json", include=set(CERTIFIED)))


def admit(selectors: list[str], manifest: str | None) -> dict[str, str]:
    """Check that every canonical selector may be served; return the certified digest of each
    keyed one (none under the development override). Raises `Refused`."""
    keyed = [s for s in selectors if keys.is_keyed(s)]
    dev = [s for s in selectors if s.startswith("dev:")]
    override = override_active()
    ignored = (
        f" ({OVERRIDE_ENV} is ignored: this copy of the package is installed, not the source tree)"
        if os.environ.get(OVERRIDE_ENV) and not override
        else ""
    )
    if dev and not override:
        raise Refused(
            "not in the manifest",
            f"{dev[0]!r}: 'dev:<n>' worlds are unkeyed and never released; they serve the repository's "
            f"own tests only{ignored}",
        )
    if not keyed:
        return {}
    secret = keys.read_secret()
    if override:
        return {}
    path = manifest_path(manifest)
    try:
        records = read_manifest(path, secret)
    except Refused as refusal:
        raise Refused(refusal.reason, refusal.detail + ignored) from None
    missing = [s for s in keyed if s not in records]
    if missing:
        more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
        shown = ", ".join(repr(s) for s in missing[:3]) + more
        raise Refused("not in the manifest", f"{shown} not in the release manifest {path}{ignored}")
    return {s: records[s]["digest"] for s in keyed}
