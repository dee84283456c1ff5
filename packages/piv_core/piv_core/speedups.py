"""Behaviour-preserving fixes for dependencies' hot paths measured on an episode's path.

pydantic (2.x) decides, every time a model is built with ``model_construct`` and a field is
left to its ``default_factory``, whether that factory takes the validated data, by calling
``inspect.signature`` on it. For builtin factories (``list``, ``time.time``) that parses the
text signature anew each time: about 0.2 ms a field. verifiers builds every message node of a
trace that way (seven such fields), so a single-reply episode spent about 4 ms of its
environment overhead there, and a multi-turn episode tens of milliseconds.

`cache_factory_signatures` memoises that pure function of the factory (keyed by the factory
object, bounded). It is applied once, when `piv_core` is imported (every environment does,
on either verifiers), only where the pydantic function exists under the name measured;
otherwise nothing changes.
"""

from __future__ import annotations

import functools

CACHE_SIZE = 1024


def cache_factory_signatures() -> bool:
    """Memoise pydantic's factory-signature check; True when it is (now or already) cached."""
    try:
        from pydantic._internal import _fields
    except ImportError:
        return False
    check = getattr(_fields, "takes_validated_data_argument", None)
    if check is None or not callable(check):
        return False
    if hasattr(check, "cache_info"):
        return True
    _fields.takes_validated_data_argument = functools.lru_cache(maxsize=CACHE_SIZE)(check)
    return True
